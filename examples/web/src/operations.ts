import { graphql } from './gql/index.ts';

/**
 * The pets of one status (or all), kept true as they change: a query marked `@live`, answered now,
 * then again on each change.
 */
export const LivePets = graphql(`
  query LivePets($status: PetStatus, $limit: Int) @live {
    pets(status: $status, limit: $limit) {
      id
      name
      categoryId
      status
    }
  }
`);

export const AddPet = graphql(`
  mutation AddPet($input: NewPetInput!) {
    createPet(input: $input) {
      id
      name
      status
    }
  }
`);
