import { randomBytes } from 'node:crypto';
import DataLoader from 'dataloader';
import { cacheKey, type ResponseCache } from './cache.ts';
import { callerKey } from './caller-key.ts';
import type { Authorization, Deadline, UpstreamClient, UpstreamDeprecation } from './client.ts';
import type { ListPetsQuery, NewPetDto, PetDto } from './contract.ts';

/** Per-request data access. Resolvers reach the upstream only through these. */
export interface Loaders {
  /** `GET /pets/{petId}`, de-duplicated per id within the request; pets already listed or created need no call. */
  petById: DataLoader<string, PetDto>;
  /** `GET /pets`, de-duplicated per (status, limit) within the request. */
  petList: DataLoader<ListPetsQuery, PetDto[], string>;
  /** `POST /pets`, exactly once per call; the new pet primes `petById`. */
  createPet(pet: NewPetDto): Promise<PetDto>;
  /** Ends the request's deadline; call once no load is pending (the operation has its result). */
  release(): void;
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
  options: {
    authError?: Error;
    onDeprecation?: (headers: UpstreamDeprecation) => void;
    cache?: ResponseCacheOptions;
  } = {},
): Loaders {
  const { authError, onDeprecation } = options;
  // One deadline for all of this request's upstream calls, retries included; started on first use
  // so requests that never reach the upstream (introspection, refused input) arm no timer.
  let deadline: Deadline | undefined;
  const signal = () => {
    deadline ??= client.deadline();
    return deadline.signal;
  };

  // The contract has no batch endpoint: a batch is the set of distinct keys asked for in one tick,
  // fetched in parallel. A failure rejects its own key only (typed: see errors.ts), so one failure
  // fails one field.
  // A refused caller never touches the cache; anyone else reads through it when one is configured.
  const upstream =
    options.cache && !authError && auth !== undefined
      ? cachedCalls(client, auth, options.cache, signal)
      : {
          listPets: (query: ListPetsQuery) => client.listPets(auth, query, signal()),
          getPet: (id: string, notify?: (headers: UpstreamDeprecation) => void) =>
            client.getPet(auth, id, signal(), notify),
          createdPet: async () => {},
        };

  // Pets already seen in this request (lists, a created pet), by id: `pet(id)` is answered from
  // them without a call. A plain map, not DataLoader.prime: priming made a promise per listed pet
  // on every request, and most requests never ask for a pet by id.
  const known = new Map<string, PetDto>();
  const remember = (pets: PetDto[]) => {
    for (const pet of pets) if (!known.has(pet.id)) known.set(pet.id, pet);
    return pets;
  };
  // Created on first use: most operations need one of the two.
  let petById: DataLoader<string, PetDto> | undefined;
  let petList: DataLoader<ListPetsQuery, PetDto[], string> | undefined;
  return {
    get petById() {
      petById ??= new DataLoader<string, PetDto>((ids) =>
        authError
          ? Promise.resolve(ids.map(() => authError))
          : Promise.all(ids.map((id) => known.get(id) ?? upstream.getPet(id, onDeprecation).catch(asError))),
      );
      return petById;
    },
    get petList() {
      petList ??= new DataLoader<ListPetsQuery, PetDto[], string>(
        (queries) =>
          authError
            ? Promise.resolve(queries.map(() => authError))
            : Promise.all(queries.map((query) => upstream.listPets(query).then(remember, asError))),
        { cacheKeyFn: (query) => `${query.status ?? ''}|${query.limit}` },
      );
      return petList;
    },
    async createPet(pet) {
      if (authError) throw authError;
      const created = remember([await client.createPet(auth, pet, signal())])[0] as PetDto;
      // Before answering, so this caller's next `pets` cannot be served a list without the new pet.
      await upstream.createdPet();
      return created;
    },
    release() {
      deadline?.release();
    },
  };
}

/** DataLoader rejects a key whose batch result is an Error. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The response cache as the loaders use it: off when absent. */
export interface ResponseCacheOptions {
  store: ResponseCache;
  /** How long a successful `pets` or `pet` answer is reused. */
  ttlMs: number;
}

/**
 * List generations are random and never reused, so a generation that expires or is evicted can only
 * cause misses, never bring back a list cached before a create. They outlive any list entry by far.
 */
const GENERATION_TTL_MS = 60 * 60 * 1000;
const newGeneration = () => randomBytes(12).toString('base64url');

/**
 * `GET /pets` and `GET /pets/{petId}` through the cache, for one caller. Keys carry the hash of
 * the caller's whole Authorization header, so two keys never share an entry; list keys carry the
 * caller's current list generation, which a successful create replaces (no scans, no deletes: old
 * lists simply become unreachable and expire). Only successful answers are stored.
 */
function cachedCalls(
  client: UpstreamClient,
  auth: string,
  { store, ttlMs }: ResponseCacheOptions,
  signal: () => AbortSignal,
) {
  const caller = callerKey(auth);
  const generationKey = cacheKey(caller, 'gen');
  // Stores never reject by contract; this guards a value that does not decode, or a store that does.
  const attempt = async <T>(run: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await run();
    } catch {
      store.stats.errors++;
      return undefined;
    }
  };
  return {
    async listPets(query: ListPetsQuery): Promise<PetDto[]> {
      const generation = await attempt(() =>
        store.setIfAbsent(generationKey, newGeneration(), GENERATION_TTL_MS),
      );
      // Without a known generation, a cached list cannot be told fresh from stale: bypass the cache.
      if (generation === undefined) return client.listPets(auth, query, signal());
      const key = cacheKey(caller, 'pets', generation, query.status ?? '-', String(query.limit));
      const hit = await attempt(async () => {
        const text = await store.get(key);
        return text === undefined ? undefined : decodePets(JSON.parse(text));
      });
      if (hit) return hit;
      const pets = await client.listPets(auth, query, signal());
      await attempt(() => store.set(key, JSON.stringify(pets), ttlMs));
      return pets;
    },
    async getPet(id: string, notify?: (headers: UpstreamDeprecation) => void): Promise<PetDto> {
      const key = cacheKey(caller, 'pet', id);
      const hit = await attempt(async () => {
        const text = await store.get(key);
        return text === undefined ? undefined : decodePetEntry(JSON.parse(text));
      });
      if (hit) {
        // Replay what the upstream announced, so a cached answer carries the same deprecation notice.
        if (hit.upstream) notify?.(hit.upstream);
        return hit.pet;
      }
      let upstream: UpstreamDeprecation | undefined;
      const pet = await client.getPet(auth, id, signal(), (headers) => {
        upstream = headers;
        notify?.(headers);
      });
      await attempt(() => store.set(key, JSON.stringify(upstream ? { pet, upstream } : { pet }), ttlMs));
      return pet;
    },
    async createdPet(): Promise<void> {
      await attempt(() => store.set(generationKey, newGeneration(), GENERATION_TTL_MS));
    },
  };
}

/** A cached value is ours, but Redis is shared: anything not shaped like a PetDto is a miss. */
function decodePets(value: unknown): PetDto[] | undefined {
  return Array.isArray(value) && value.every(isPetDto) ? value : undefined;
}

function decodePetEntry(value: unknown): { pet: PetDto; upstream?: UpstreamDeprecation } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { pet, upstream } = value as { pet?: unknown; upstream?: unknown };
  if (!isPetDto(pet)) return undefined;
  if (upstream === undefined) return { pet };
  if (typeof upstream !== 'object' || upstream === null) return undefined;
  const { deprecation, sunset } = upstream as Record<string, unknown>;
  return {
    pet,
    upstream: {
      ...(typeof deprecation === 'string' ? { deprecation } : {}),
      ...(typeof sunset === 'string' ? { sunset } : {}),
    },
  };
}

function isPetDto(value: unknown): value is PetDto {
  if (typeof value !== 'object' || value === null) return false;
  const pet = value as Record<string, unknown>;
  return (
    typeof pet.id === 'string' &&
    typeof pet.name === 'string' &&
    typeof pet.categoryId === 'string' &&
    (pet.status === undefined ||
      pet.status === 'available' ||
      pet.status === 'pending' ||
      pet.status === 'sold')
  );
}
