import DataLoader from 'dataloader';
import type { GraphQLError } from 'graphql';
import type { Authorization, UpstreamClient, UpstreamDeprecation } from './client.ts';
import type { ListPetsQuery, NewPetDto, PetDto } from './contract.ts';
import { toGraphQLError } from './errors.ts';

/** Per-request data access. Resolvers reach the upstream only through these. */
export interface Loaders {
  /** `GET /pets/{petId}`, de-duplicated per id within the request. */
  petById: DataLoader<string, PetDto>;
  /** `GET /pets`, de-duplicated per (status, limit) within the request. */
  petList: DataLoader<ListPetsQuery, PetDto[], string>;
  /** `POST /pets`, exactly once per call; the new pet primes `petById`. */
  createPet(pet: NewPetDto): Promise<PetDto>;
}

/**
 * Creates the loaders for one GraphQL request and one caller's `Authorization`. They are never
 * shared across requests, so one caller's results can never be served to another. When
 * `authError` is set, every load fails with it and nothing is sent upstream.
 */
export function createLoaders(
  client: UpstreamClient,
  auth: Authorization,
  options: { authError?: GraphQLError; onDeprecation?: (headers: UpstreamDeprecation) => void } = {},
): Loaders {
  const { authError, onDeprecation } = options;
  // One deadline for all of this request's upstream calls, retries included; started on first use
  // so requests that never reach the upstream (introspection, refused input) arm no timer.
  let deadline: AbortSignal | undefined;
  const signal = () => {
    deadline ??= client.deadline();
    return deadline;
  };

  // The contract has no batch endpoint: a batch is the set of distinct keys asked for in one tick,
  // fetched in parallel. Errors become GraphQL errors here, per key, so one failure fails one field.
  const petById = new DataLoader<string, PetDto>((ids) =>
    authError
      ? Promise.resolve(ids.map(() => authError))
      : Promise.all(ids.map((id) => client.getPet(auth, id, signal(), onDeprecation).catch(toGraphQLError))),
  );
  const primeAll = (pets: PetDto[]) => {
    for (const pet of pets) petById.prime(pet.id, pet);
    return pets;
  };
  const petList = new DataLoader<ListPetsQuery, PetDto[], string>(
    (queries) =>
      authError
        ? Promise.resolve(queries.map(() => authError))
        : Promise.all(
            queries.map((query) => client.listPets(auth, query, signal()).then(primeAll, toGraphQLError)),
          ),
    { cacheKeyFn: (query) => `${query.status ?? ''}|${query.limit}` },
  );
  return {
    petById,
    petList,
    async createPet(pet) {
      if (authError) throw authError;
      try {
        return primeAll([await client.createPet(auth, pet, signal())])[0] as PetDto;
      } catch (error) {
        throw toGraphQLError(error);
      }
    },
  };
}
