import { randomBytes } from 'node:crypto';
import { isPetStatus } from '../contract/animal-store.ts';
import { cacheKey, type ResponseCache } from '../stores/response-cache.ts';
import { type ListPetsQuery, listKey, type PetDto } from './bodies.ts';
import { type CallerKey, createCallerKey } from './caller-key.ts';
import type { Deadline, UpstreamClient, UpstreamDeprecation } from './client.ts';

/*
 * The shared response cache as one caller's loaders use it (the store itself is
 * stores/response-cache.ts): what is kept, under which keys, and what a create invalidates.
 */

/** The response cache as the loaders use it: off when absent. */
export interface ResponseCacheOptions {
  store: ResponseCache;
  /** How long a successful `pets` or `pet` answer is reused. */
  ttlMs: number;
  /**
   * Names the caller in keys: the same secret on every instance that shares the store.
   * @default keyed by this process's random secret
   */
  callerKey?: CallerKey;
}

const processCallerKey = createCallerKey();

/**
 * List generations are random and never reused, so a generation that expires or is evicted can only
 * cause misses, never bring back a list cached before a create. They outlive any list entry by far.
 */
const GENERATION_TTL_MS = 60 * 60 * 1000;
const newGeneration = () => randomBytes(12).toString('base64url');

/** Each lookup is told `called` when it goes to the upstream (a miss), before the call. */
export interface CachedCalls {
  listPets(query: ListPetsQuery, called: () => void): Promise<PetDto[]>;
  getPet(id: string, called: () => void, notify?: (headers: UpstreamDeprecation) => void): Promise<PetDto>;
  /**
   * A write succeeded: with `lists`, this caller's cached lists are stale; with `item`, so is that
   * pet's cached answer.
   */
  changed(change: { lists: boolean; item?: string }): Promise<void>;
}

/**
 * `GET /pets` and `GET /pets/{petId}` through the cache, for one caller. Keys carry the HMAC of
 * the caller's whole Authorization header, so two keys never share an entry; list keys carry the
 * caller's current list generation, which a successful create replaces (no scans, no deletes: old
 * lists simply become unreachable and expire). Only successful answers are stored.
 */
export function cachedCalls(
  client: UpstreamClient,
  auth: string,
  { store, ttlMs, callerKey = processCallerKey }: ResponseCacheOptions,
  deadline: () => Deadline,
): CachedCalls {
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
    async listPets(query: ListPetsQuery, called: () => void): Promise<PetDto[]> {
      // Read, not created: nothing derived from a key is written before the upstream accepts it.
      // Not a lookup of its own: the list's lookup is this read when it finds no generation (a
      // miss, or an error when the store failed), else the read of the list's key below.
      const read = await attempt(() => store.peek(generationKey));
      const generation = read?.value;
      if (generation === undefined) {
        if (read) store.stats.misses++;
        called();
        const pets = await client.listPets(auth, query, deadline());
        // Accepted: start this caller's generation. Kept only if it is the one now stored: any
        // other value was set meanwhile (by a create, perhaps after this list was read upstream),
        // so this list may be stale and is not cached.
        const proposed = newGeneration();
        const stored = await attempt(() => store.setIfAbsent(generationKey, proposed, GENERATION_TTL_MS));
        if (stored === proposed) {
          const key = cacheKey(caller, 'pets', proposed, listKey(query));
          await attempt(() => store.set(key, JSON.stringify(pets), ttlMs));
        }
        return pets;
      }
      const key = cacheKey(caller, 'pets', generation, listKey(query));
      const hit = await attempt(async () => {
        const text = await store.get(key);
        return text === undefined ? undefined : decodePets(JSON.parse(text));
      });
      if (hit) return hit;
      called();
      // Shared only with calls of this generation: one sent before a create (here or on another
      // instance) would be stored under the generation after it.
      const pets = await client.listPets(auth, query, deadline(), generation);
      await attempt(() => store.set(key, JSON.stringify(pets), ttlMs));
      return pets;
    },
    async getPet(
      id: string,
      called: () => void,
      notify?: (headers: UpstreamDeprecation) => void,
    ): Promise<PetDto> {
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
      called();
      const pet = await client.getPet(auth, id, deadline(), (headers) => {
        upstream = headers;
        notify?.(headers);
      });
      await attempt(() => store.set(key, JSON.stringify(upstream ? { pet, upstream } : { pet }), ttlMs));
      return pet;
    },
    async changed({ lists, item }): Promise<void> {
      await Promise.all([
        lists && attempt(() => store.set(generationKey, newGeneration(), GENERATION_TTL_MS)),
        item !== undefined && attempt(() => store.delete(cacheKey(caller, 'pet', item))),
      ]);
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
    (pet.status === undefined || isPetStatus(pet.status))
  );
}
