import {
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  isInputObjectType,
  isLeafType,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  parse,
} from 'graphql';
import { z } from 'zod';
import { LIST_LIMIT, PET_SUNSET_DAY } from '../contract/animal-store.ts';
import { inputShapeOf, objectSchemaOf } from './graphql-to-zod.ts';
import type { ToolSpec } from './tool.ts';

/*
 * The tools offered without a trusted-documents manifest: the two things analysts do most (list,
 * create), each a document made from the schema, and a read-only query tool for everything else.
 * Their arguments and answers are read off the schema, as a manifest's tools are
 * (graphql-to-zod.ts): a field the schema adds or changes reaches them with no edit here.
 */

/** The fields of `type` a selection names as they are: no arguments, no sub-selection, not deprecated. */
function leafFieldsOf(type: GraphQLObjectType): string {
  return Object.values(type.getFields())
    .filter(
      (field) => isLeafType(getNamedType(field.type)) && field.args.length === 0 && !field.deprecationReason,
    )
    .map((field) => field.name)
    .join(' ');
}

/** A document of one operation, and what its root field answers (its selection, typed by the schema). */
function operationOf(schema: GraphQLSchema, text: string) {
  const operation = parse(text, { noLocation: true }).definitions[0] as OperationDefinitionNode;
  const root = schema.getRootType(operation.operation);
  if (!root) throw new Error(`The schema has no ${operation.operation} type.`);
  return { text, output: objectSchemaOf(root, operation.selectionSet, new Map()) };
}

function rootField(schema: GraphQLSchema, type: OperationTypeNode, name: string) {
  const field = schema.getRootType(type)?.getFields()[name];
  if (!field) throw new Error(`The schema has no ${type} field ${name}.`);
  return field;
}

/** `pets(…)`, its arguments the tool's. */
function listPets(schema: GraphQLSchema): ToolSpec {
  const pets = rootField(schema, OperationTypeNode.QUERY, 'pets');
  const pet = getNamedType(pets.type) as GraphQLObjectType;
  const variables = pets.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const passed = pets.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const { text, output } = operationOf(
    schema,
    `query ListPets(${variables}) { pets(${passed}) { ${leafFieldsOf(pet)} } }`,
  );
  return {
    name: 'list_pets',
    title: 'List pets',
    description: `Lists the animals in the store for the caller's API key, optionally only those with one status (AVAILABLE, PENDING, SOLD), at most ${LIST_LIMIT.max} (default ${LIST_LIMIT.default}). Ids are 64-bit integers as strings. There is no paging past the first ${LIST_LIMIT.max} and no lookup by id: filter by status instead.`,
    input: inputShapeOf(pets.args),
    output,
    readOnly: true,
    request: (args) => ({ query: text, operationName: 'ListPets', variables: args }),
  };
}

/** `createPet(input:)`, the input type's fields the tool's arguments. */
function createPet(schema: GraphQLSchema): ToolSpec {
  const field = rootField(schema, OperationTypeNode.MUTATION, 'createPet');
  const input = field.args.find((arg) => arg.name === 'input');
  const type = input && getNamedType(input.type);
  if (!input || !isInputObjectType(type)) throw new Error('createPet takes no input object.');
  const pet = getNamedType(field.type) as GraphQLObjectType;
  const { text, output } = operationOf(
    schema,
    `mutation CreatePet($input: ${String(input.type)}) { createPet(input: $input) { ${leafFieldsOf(pet)} } }`,
  );
  return {
    name: 'create_pet',
    title: 'Create a pet',
    description:
      "Adds an animal to the store with the caller's API key (sent once, never retried). Ask the user before calling it. The name must not be blank; categoryId is a 64-bit integer as a string. Returns the animal with the id the store gave it.",
    input: inputShapeOf(Object.values(type.getFields())),
    output,
    readOnly: false,
    request: (args) => ({ query: text, operationName: 'CreatePet', variables: { input: args } }),
  };
}

/** Why a document may not run through run_query; undefined when it is queries only (or does not parse: Yoga words that). */
export function notReadOnly(query: string): string | undefined {
  let document: ReturnType<typeof parse>;
  try {
    document = parse(query, { noLocation: true, maxTokens: 10_000 });
  } catch {
    return undefined;
  }
  const kinds = document.definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION && definition.operation !== OperationTypeNode.QUERY
      ? [definition.operation]
      : [],
  );
  if (kinds.length === 0) return undefined;
  return `run_query is read-only: this document holds a ${kinds[0]}. Use create_pet to add an animal; subscriptions are not offered to assistants.`;
}

/** run_query, whose description points to the schema resource only where one is offered (introspection on). */
const runQuery = (schemaOffered: boolean): ToolSpec => ({
  name: 'run_query',
  title: 'Run a read-only GraphQL query',
  description: `Runs one GraphQL query (queries only: no mutation or subscription) against the gateway's schema${schemaOffered ? ', which the resource graphql://schema holds' : ''}. Every limit of the gateway applies: depth, aliases, tokens and cost (a list costs its selections times its limit). Prefer list_pets when it is enough. \`pet(id)\` is deprecated (removed on ${PET_SUNSET_DAY}): it still answers here, and each use is counted, but use \`pets(status:, limit:)\` instead.`,
  input: {
    query: z
      .string()
      .describe('A GraphQL query document, e.g. { pets(status: SOLD, limit: 5) { id name } }.'),
    // Any JSON value, said as such: a bare `{}` item schema constrains nothing (the Inspector's --strict warns).
    variables: z
      .record(z.string(), z.json())
      .optional()
      .describe("The query's variables, if it declares any."),
    operationName: z.string().optional().describe('Which operation to run when the document holds several.'),
  },
  output: z.object({}).catchall(z.json()),
  readOnly: true,
  request: (args) => {
    const query = String(args.query);
    const refused = notReadOnly(query);
    if (refused !== undefined) return { refused };
    return {
      query,
      ...(typeof args.operationName === 'string' ? { operationName: args.operationName } : {}),
      ...(args.variables ? { variables: args.variables as Record<string, unknown> } : {}),
    };
  },
});

/**
 * The tools without a manifest, and beside a manifest in `allow` mode, made from `schema`;
 * `schemaOffered`: introspection on.
 */
export function builtInTools(schema: GraphQLSchema, schemaOffered: boolean): readonly ToolSpec[] {
  return [listPets(schema), createPet(schema), runQuery(schemaOffered)];
}
