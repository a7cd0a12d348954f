import DataLoader from 'dataloader';
import type { Authorization, UpstreamClient } from './client.ts';
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
 * shared across requests, so one caller's results can never be served to another.
 */
export function createLoaders(client: UpstreamClient, auth: Authorization): Loaders {
  // The contract has no batch endpoint: a batch is the set of distinct keys asked for in one tick,
  // fetched in parallel. Errors become GraphQL errors here, per key, so one failure fails one field.
  const petById = new DataLoader<string, PetDto>((ids) =>
    Promise.all(ids.map((id) => client.getPet(auth, id).catch(toGraphQLError))),
  );
  const primeAll = (pets: PetDto[]) => {
    for (const pet of pets) petById.prime(pet.id, pet);
    return pets;
  };
  const petList = new DataLoader<ListPetsQuery, PetDto[], string>(
    (queries) =>
      Promise.all(queries.map((query) => client.listPets(auth, query).then(primeAll, toGraphQLError))),
    { cacheKeyFn: (query) => `${query.status ?? ''}|${query.limit}` },
  );
  return {
    petById,
    petList,
    async createPet(pet) {
      try {
        return primeAll([await client.createPet(auth, pet)])[0] as PetDto;
      } catch (error) {
        throw toGraphQLError(error);
      }
    },
  };
}
