import type DataLoader from 'dataloader';
import { type ListPetsQuery, listKey, type PetDto, type WriteRequest } from './bodies.ts';
import type { Deadline, UpstreamDeprecation } from './client.ts';
import type { CallLedger, Loaders } from './loaders.ts';

/** One batch entry's view of the loaders its batch shares (see EntryView). */
export interface EntryLoaders extends Loaders {
  /** Of `upstreamCalls` (the calls this entry asked for), those another entry asked for too. */
  readonly sharedUpstreamCalls: number;
}

/**
 * One batch entry's view of shared loaders: every call goes to them (one memo, one DataLoader
 * batch per tick), and the keys this entry asked for are noted, so its log line counts the calls
 * it needed, whoever's load sent them.
 */
export class EntryView implements EntryLoaders {
  readonly #base: Loaders;
  readonly #ledger: CallLedger;
  readonly #asked = new Set<string>();
  /** Writes this entry sent (a shared batch holds none; counted all the same). */
  #writes = 0;
  readonly petById: Pick<DataLoader<string, PetDto>, 'load'>;
  readonly petList: Pick<DataLoader<ListPetsQuery, PetDto[], string>, 'load'>;

  constructor(base: Loaders) {
    this.#base = base;
    this.#ledger = base.ledger();
    this.petById = {
      load: (id) => {
        this.#ask(`p${id}`);
        return base.petById.load(id);
      },
    };
    this.petList = {
      load: (query) => {
        this.#ask(`l${listKey(query)}`);
        return base.petList.load(query);
      },
    };
  }

  #ask(key: string): void {
    if (this.#asked.has(key)) return;
    this.#asked.add(key);
    this.#ledger.askers.set(key, (this.#ledger.askers.get(key) ?? 0) + 1);
  }

  get upstreamCalls(): number {
    let calls = this.#writes;
    for (const key of this.#asked) if (this.#ledger.called.has(key)) calls++;
    return calls;
  }

  get sharedUpstreamCalls(): number {
    let shared = 0;
    for (const key of this.#asked)
      if (this.#ledger.called.has(key) && (this.#ledger.askers.get(key) ?? 0) > 1) shared++;
    return shared;
  }

  get upstreamPetDeprecation(): UpstreamDeprecation | undefined {
    return this.#base.upstreamPetDeprecation;
  }

  listPets(query: ListPetsQuery): Promise<PetDto[]> {
    this.#ask(`l${listKey(query)}`);
    return this.#base.listPets(query);
  }

  getPet(id: string): Promise<PetDto> {
    this.#ask(`p${id}`);
    return this.#base.getPet(id);
  }

  write(request: WriteRequest): Promise<PetDto | null> {
    // The base counts a write as it sends it, synchronously: the difference is this one's.
    const before = this.#base.upstreamCalls;
    const answer = this.#base.write(request);
    this.#writes += this.#base.upstreamCalls - before;
    return answer;
  }

  adoptList(query: ListPetsQuery, pets: Promise<PetDto[]>): void {
    this.#base.adoptList(query, pets);
  }

  adoptDeadline(deadline: Deadline): void {
    this.#base.adoptDeadline(deadline);
  }

  ledger(): CallLedger {
    return this.#ledger;
  }

  replay(): void {
    this.#base.replay();
  }

  release(): void {
    this.#base.release();
  }

  abandon(): void {
    this.#base.abandon();
  }
}
