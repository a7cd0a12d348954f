import { graphql } from '../generated/index.ts';

// The operations the tests send, typed by codegen from schema/schema.graphql.

export const ListPets = graphql(`
  query ListPets($status: PetStatus, $limit: Int) {
    pets(status: $status, limit: $limit) {
      id
      name
      categoryId
      status
    }
  }
`);

export const ListPetsDefault = graphql(`
  query ListPetsDefault {
    pets {
      id
    }
  }
`);

export const GetPet = graphql(`
  query GetPet($id: ID!) {
    pet(id: $id) {
      id
      name
      categoryId
      status
    }
  }
`);

export const CreatePet = graphql(`
  mutation CreatePet($input: NewPetInput!) {
    createPet(input: $input) {
      id
      name
      categoryId
      status
    }
  }
`);

export const RepeatedPets = graphql(`
  query RepeatedPets {
    a: pets(status: SOLD, limit: 5) {
      id
    }
    b: pets(status: SOLD, limit: 5) {
      name
    }
    c: pets(limit: 5) {
      id
    }
  }
`);

export const RepeatedPet = graphql(`
  query RepeatedPet($one: ID!, $two: ID!) {
    a: pet(id: $one) {
      id
    }
    b: pet(id: $one) {
      name
    }
    c: pet(id: $two) {
      id
    }
    d: pet(id: $one) {
      categoryId
    }
  }
`);
