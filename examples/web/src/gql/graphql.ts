/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** An animal to add to the store. */
export type NewPetInput = {
  /** Identifier of the category the animal belongs to (a 64-bit integer, as a decimal string). */
  categoryId: string;
  /** The animal's name. */
  name: string;
  /** Availability status; the store sets none when omitted. */
  status?: PetStatus | null | undefined;
};

/** Availability of an animal in the store. */
export type PetStatus =
  /** On offer. */
  | 'AVAILABLE'
  /** Reserved; a sale is in progress. */
  | 'PENDING'
  /** Sold; no longer on offer. */
  | 'SOLD';

export type LivePetsQueryVariables = Exact<{
  status?: PetStatus | null | undefined;
  limit?: number | null | undefined;
}>;


export type LivePetsQuery = { pets: Array<{ id: string, name: string, categoryId: string, status: PetStatus | null }> };

export type AddPetMutationVariables = Exact<{
  input: NewPetInput;
}>;


export type AddPetMutation = { createPet: { id: string, name: string, status: PetStatus | null } };


export const LivePetsDocument = {"__meta__":{"hash":"sha256:8c2a922a39bfd9690718712ca64fc7c7f3f41af4e5443af21471fa39a0cb7211"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"LivePets"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"status"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"PetStatus"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"directives":[{"kind":"Directive","name":{"kind":"Name","value":"live"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pets"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"Variable","name":{"kind":"Name","value":"status"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"categoryId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]} as unknown as DocumentNode<LivePetsQuery, LivePetsQueryVariables>;
export const AddPetDocument = {"__meta__":{"hash":"sha256:4ff5e1887a6b5192fba127dfd215f453801a0659a25975e55fd0019e55fe3891"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddPet"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"NewPetInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createPet"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]} as unknown as DocumentNode<AddPetMutation, AddPetMutationVariables>;