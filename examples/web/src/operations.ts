import { graphql } from './gql/index.ts';

export const PetsByStatus = graphql(`
  query PetsByStatus($status: PetStatus, $limit: Int) {
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
