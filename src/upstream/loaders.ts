import DataLoader from 'dataloader';
import type { Authorization } from './authorization.ts';
import { type ListPetsQuery, listKey, type PetDto, type WriteRequest } from './bodies.ts';
import { type CachedCalls, cachedCalls, type ResponseCacheOptions } from './cached-calls.ts';
import type { Deadline, UpstreamClient, UpstreamDeprecation } from './client.ts';
import { expiryError, UpstreamResponseError } from './errors.ts';

/**
 * One request's upstream calls for one caller, each made at most once per key: `GET /pets` per
 * (status, limit), `GET /pets/{petId}` per id (pets already listed or created need no call). A
 * compiled plan (execution/plan.ts) calls these directly; the resolvers go through `petList` and
 * `petById`, DataLoaders that share the same memo, so when a plan hands a request over, the
 * resolvers find what the plan already received and nothing is sent twice.
 */
export interface UpstreamCalls {
  listPets(query: ListPetsQuery): Promise<PetDto[]>;
  getPet(id: string): Promise<PetDto>;
  /**
   * A write (`POST /pets`, or any route that declares what it `changes`), made once per call (sent
   * again after a failure only if its route is idempotent: upstream/retry.ts); once it succeeds, what it changed is forgotten and told (see `Loaders`). After `replay()`,
   * the same calls in the same order are answered from the first round (a plan that hands over
   * must not create the pet twice).
   */
  write(request: WriteRequest): Promise<PetDto | null>;
}

/** Per-request data access. Resolvers reach the upstream only through these. */
export interface Loaders extends UpstreamCalls {
  /** `GET /pets/{petId}`, de-duplicated per id within the request; pets already listed or created need no call. */
  readonly petById: Pick<DataLoader<string, PetDto>, 'load'>;
  /** `GET /pets`, de-duplicated per (status, limit) within the request. */
  readonly petList: Pick<DataLoader<ListPetsQuery, PetDto[], string>, 'load'>;
  /** Upstream requests this request has made so far (cache hits and shared answers not counted). */
  readonly upstreamCalls: number;
  /**
   * What the upstream announced on `GET /pets/{petId}` (its `Deprecation` / `Sunset` headers), the
   * first time any call of these loaders heard it: a fact about the route, so every operation
   * sharing them (a batch's entries) reports it, whichever entry's call brought it.
   */
  readonly upstreamPetDeprecation: UpstreamDeprecation | undefined;
  /** Answers the next `write` calls from those already made, in order (see UpstreamCalls). */
  replay(): void;
  /**
   * Takes `pets` as this request's `GET /pets` for `query`, counted as a call made: a call the fast
   * lane made before there were loaders (fast-lane/one-call.ts), so the resolvers that answer
   * instead find its outcome and nothing is sent again.
   */
  adoptList(query: ListPetsQuery, pets: Promise<PetDto[]>): void;
  /**
   * Takes `deadline`, started for this request before there were loaders (fast-lane/one-call.ts),
   * as theirs, before any call: a request has one deadline, whichever path began it, and
   * `release` and `abandon` end it.
   */
  adoptDeadline(deadline: Deadline): void;
  /**
   * From now on, which calls go upstream, by key (`l` + list key, `p` + id), and how many of the
   * batch entries sharing these loaders asked for each (entry-loaders.ts keeps it).
   */
  ledger(): CallLedger;
  /** Ends the request's deadline; call once no load is pending (the operation has its result). */
  release(): void;
  /**
   * The client went away: GETs in flight are cancelled and later calls fail at once
   * (`UpstreamCancelledError`), nothing more is sent. A POST already sent is let finish (see
   * `write`). Nothing once released.
   */
  abandon(): void;
}

/** Which calls of shared loaders went upstream, and how many entries asked for each (see `ledger`). */
export interface CallLedger {
  readonly called: Set<string>;
  readonly askers: Map<string, number>;
}

export interface LoaderOptions {
  /** Set when the caller's `Authorization` cannot be used: every call fails with it, nothing is sent. */
  authError?: Error;
  cache?: ResponseCacheOptions;
  /**
   * Told each time a write of this caller changed its lists, once the upstream has answered (live
   * lists ask again).
   */
  changes?: { listsChanged(auth: string): void };
}

/**
 * Creates the loaders for one GraphQL request and one caller's `Authorization`. They are never
 * shared across requests, so one caller's results can never be served to another. When
 * `authError` is set, every load fails with it and nothing is sent upstream (or to the cache).
 * With `cache`, `pets` and `pet` answers are reused across this caller's requests for `ttlMs`.
 */
export function createLoaders(
  client: UpstreamClient,
  auth: Authorization,
  options: LoaderOptions = {},
): Loaders {
  return new RequestLoaders(client, auth, options);
}

/**
 * A class rather than closures: one object per request, its methods shared, so a request in flight
 * keeps little alive (what it keeps is promoted at every scavenge under load).
 */
class RequestLoaders implements Loaders {
  readonly #client: UpstreamClient;
  readonly #auth: Authorization;
  readonly #options: LoaderOptions;
  // One deadline for all of this request's upstream calls, retries included; started on first use
  // so requests that never reach the upstream (introspection, refused input) arm no timer.
  #deadline: Deadline | undefined;
  /** The client went away before the deadline was started: it starts abandoned. */
  #gone = false;
  #calls = 0;
  // Kept only once an entry view exists (a batch's shared loaders): which calls went upstream, by
  // key ('l' + list key, 'p' + id), and how many entries asked for each.
  #ledger: CallLedger | undefined;
  #upstreamPet: UpstreamDeprecation | undefined;
  readonly #heard = (headers: UpstreamDeprecation) => {
    this.#upstreamPet ??= headers;
  };
  #cached: CachedCalls | undefined;
  // Pets already seen in this request (lists, a created pet), by id: `pet(id)` is answered from
  // them without a call. Not DataLoader.prime, which made a promise per listed pet; and the map is
  // built only when a pet is first asked for by id (from the pets seen so far, in order, the first
  // seen winning), since most requests never ask: 20 map entries per list20 request were among
  // its largest allocations.
  #seen: PetDto[][] | undefined;
  #known: Map<string, PetDto> | undefined;
  // The memos, shared with the DataLoaders as their cache maps; created on first use.
  #lists: Map<string, Promise<PetDto[]>> | undefined;
  #pets: Map<string, Promise<PetDto>> | undefined;
  #writes: Promise<PetDto | null>[] | undefined;
  #replayed = 0;
  #petById: DataLoader<string, PetDto> | undefined;
  #petList: DataLoader<ListPetsQuery, PetDto[], string> | undefined;

  constructor(client: UpstreamClient, auth: Authorization, options: LoaderOptions) {
    this.#client = client;
    this.#auth = auth;
    this.#options = options;
  }

  get upstreamCalls(): number {
    return this.#calls;
  }

  get upstreamPetDeprecation(): UpstreamDeprecation | undefined {
    return this.#upstreamPet;
  }

  listPets(query: ListPetsQuery): Promise<PetDto[]> {
    this.#lists ??= new Map();
    const key = listKey(query);
    let promise = this.#lists.get(key);
    if (promise === undefined) {
      promise = this.#fetchList(query);
      this.#lists.set(key, promise);
    }
    return promise;
  }

  getPet(id: string): Promise<PetDto> {
    this.#pets ??= new Map();
    let promise = this.#pets.get(id);
    if (promise === undefined) {
      promise = this.#fetchPet(id);
      this.#pets.set(id, promise);
    }
    return promise;
  }

  write(request: WriteRequest): Promise<PetDto | null> {
    this.#writes ??= [];
    // The n-th write of a replay is answered by the n-th of the first round.
    const index = this.#replayed++;
    this.#writes[index] ??= this.#write(request);
    return this.#writes[index];
  }

  replay(): void {
    this.#replayed = 0;
  }

  ledger(): CallLedger {
    this.#ledger ??= { called: new Set(), askers: new Map() };
    return this.#ledger;
  }

  /**
   * A call goes upstream: counted, and noted by key (`l` + list key, `p` + id) when entries keep
   * count; the key is not even written otherwise, as for a single operation's loaders.
   */
  #called(list: ListPetsQuery | undefined, id?: string): void {
    this.#calls++;
    this.#ledger?.called.add(list ? `l${listKey(list)}` : `p${id}`);
  }

  adoptList(query: ListPetsQuery, pets: Promise<PetDto[]>): void {
    this.#lists ??= new Map();
    this.#called(query);
    this.#lists.set(
      listKey(query),
      pets.then((list) => {
        this.#remember(list);
        return list;
      }),
    );
  }

  get petById(): DataLoader<string, PetDto> {
    this.#pets ??= new Map();
    this.#petById ??= new DataLoader<string, PetDto>(
      (ids) => settlingApart(ids.map((id) => this.#fetchPet(id))),
      { cacheMap: this.#pets },
    );
    return this.#petById;
  }

  get petList(): DataLoader<ListPetsQuery, PetDto[], string> {
    this.#lists ??= new Map();
    this.#petList ??= new DataLoader<ListPetsQuery, PetDto[], string>(
      (queries) => settlingApart(queries.map((query) => this.#fetchList(query))),
      { cacheKeyFn: listKey, cacheMap: this.#lists },
    );
    return this.#petList;
  }

  adoptDeadline(deadline: Deadline): void {
    // Loaders that already started one keep it: the adopted one would end no call of theirs.
    if (this.#deadline !== undefined) {
      deadline.release();
      return;
    }
    this.#deadline = deadline;
    if (this.#gone) deadline.abandon();
  }

  release(): void {
    this.#deadline?.release();
  }

  abandon(): void {
    this.#gone = true;
    this.#deadline?.abandon();
  }

  #requestDeadline(): Deadline {
    if (this.#deadline === undefined) {
      this.#deadline = this.#client.deadline();
      if (this.#gone) this.#deadline.abandon();
    }
    return this.#deadline;
  }

  /** The cache, for a caller it may serve; undefined when off or the caller is refused. */
  #cache(): CachedCalls | undefined {
    const { cache, authError } = this.#options;
    if (cache === undefined || authError !== undefined || this.#auth === undefined) return undefined;
    this.#cached ??= cachedCalls(this.#client, this.#auth, cache, () => this.#requestDeadline());
    return this.#cached;
  }

  async #fetchList(query: ListPetsQuery): Promise<PetDto[]> {
    if (this.#options.authError) throw this.#options.authError;
    const cached = this.#cache();
    let pets: PetDto[];
    if (cached) pets = await cached.listPets(query, () => this.#called(query));
    else {
      this.#called(query);
      pets = await this.#client.listPets(this.#auth, query, this.#requestDeadline());
    }
    this.#remember(pets);
    return pets;
  }

  #remember(pets: PetDto[]): void {
    if (this.#known) {
      for (const pet of pets) if (!this.#known.has(pet.id)) this.#known.set(pet.id, pet);
    } else {
      this.#seen ??= [];
      this.#seen.push(pets);
    }
  }

  #knownPet(id: string): PetDto | undefined {
    if (!this.#known) {
      if (!this.#seen) return undefined;
      this.#known = new Map();
      for (const pets of this.#seen)
        for (const pet of pets) if (!this.#known.has(pet.id)) this.#known.set(pet.id, pet);
      this.#seen = undefined;
    }
    return this.#known.get(id);
  }

  async #fetchPet(id: string): Promise<PetDto> {
    if (this.#options.authError) throw this.#options.authError;
    const known = this.#knownPet(id);
    if (known) return known;
    const cached = this.#cache();
    if (cached) return cached.getPet(id, () => this.#called(undefined, id), this.#heard);
    this.#called(undefined, id);
    return this.#client.getPet(this.#auth, id, this.#requestDeadline(), this.#heard);
  }

  /**
   * One write, and what follows from its route's `changes`: the pet it answers is known to this
   * request; the caller's cached lists and the named pet's cached answer are dropped; live lists
   * are told. Nothing here is about one mutation: a route that declares its changes gets all of it.
   */
  async #write(write: WriteRequest): Promise<PetDto | null> {
    if (this.#options.authError) throw this.#options.authError;
    const request = this.#requestDeadline();
    // Not sent once the client has gone (nor past the deadline): nothing is changed that nobody asked for.
    if (request.expired) throw expiryError(request);
    this.#calls++;
    // Once sent, a write runs to the operation's deadline even if the client leaves: cut off, the
    // store may or may not hold the change, and the cache and live lists could not know which. Its
    // answer (dropped by the client) still refreshes them. Hence its own deadline, with the same end.
    const own = this.#client.deadline(Math.max(0, request.end - Date.now()));
    let answer: PetDto | null;
    try {
      answer = await this.#client.write(this.#auth, write, own);
    } catch (error) {
      // Timed out, cut off, or a 5xx: the store may have kept the change all the same, and nothing
      // here can tell. What the change would make stale is dropped as after a success: a wasted
      // refetch at worst, never a list without the caller's pet. A 4xx is the store saying no.
      const refused = error instanceof UpstreamResponseError && error.status < 500;
      if (!refused) await this.#changed(write, undefined);
      throw error;
    } finally {
      own.release();
    }
    await this.#changed(write, answer);
    return answer;
  }

  /**
   * What a write's route `changes` is forgotten before the write is answered (its answer, when it
   * has one, known instead), so this caller's next `pets` cannot be served a list without the
   * change; live lists are told.
   */
  async #changed(write: WriteRequest, answer: PetDto | null | undefined): Promise<void> {
    const { changes } = write.route;
    // The pet a write changed is no longer what this request saw of it; its answer is.
    const item = write.params?.petId ?? answer?.id;
    if (changes.item && item !== undefined) this.#forget(item);
    if (answer) this.#remember([answer]);
    await this.#cache()?.changed({ lists: changes.lists, ...(changes.item && item ? { item } : {}) });
    if (changes.lists && this.#auth !== undefined) this.#options.changes?.listsChanged(this.#auth);
  }

  /** A pet this request may no longer answer from what it has seen or fetched. */
  #forget(id: string): void {
    this.#knownPet(id);
    this.#known?.delete(id);
    this.#pets?.delete(id);
  }
}

/**
 * A batch's answers as each key's own promise, not Promise.all of them: DataLoader resolves each
 * load with its value, and a promise given as the value settles that load alone, so a slow call (a
 * deferred field's list) never holds back another (the first part's). A failure is told only once
 * every earlier key has settled, so errors still arrive in key order, as when the batch settled
 * together: which error nulls a field never depends on which call the upstream answered first.
 * DataLoader's types say values; at run time it resolves each load with what it is given, which
 * adopts a promise.
 */
function settlingApart<V>(calls: Array<Promise<V>>): Promise<ArrayLike<V | Error>> {
  const ordered = calls.map((call, index) =>
    index === 0
      ? call
      : call.catch(async (error: unknown) => {
          await Promise.allSettled(calls.slice(0, index));
          throw error;
        }),
  );
  return Promise.resolve(ordered as unknown as ArrayLike<V | Error>);
}
