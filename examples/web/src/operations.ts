import { graphql } from './gql/index.ts';

/** The pets of one status (or all), kept true as they change: the list now, then one per change. */
export const LivePets = graphql(`
  subscription LivePets($status: PetStatus, $limit: Int) {
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
