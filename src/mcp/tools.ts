import { type GraphQLSchema, Kind, OperationTypeNode, parse } from 'graphql';
import { z } from 'zod';
import { LIST_LIMIT, PET_SUNSET_DAY } from '../contract/animal-store.ts';
import { inputShapeOf } from '../schema/zod-types.ts';
import { operationOf, selectionOf } from './documents.ts';
import type { ToolSpec } from './tool.ts';
import { writeTools } from './write-tools.ts';

/*
 * The tools offered without a trusted-documents manifest: listing pets, the thing analysts do most;
 * one tool per mutation that declares an upstream write (write-tools.ts); and a read-only query tool
 * for everything else. Their arguments and answers are read off the schema, as a manifest's tools
 * are (schema/zod-types.ts): a field the schema adds or changes reaches them with no edit here.
 */

function rootField(schema: GraphQLSchema, type: OperationTypeNode, name: string) {
  const field = schema.getRootType(type)?.getFields()[name];
  if (!field) throw new Error(`The schema has no ${type} field ${name}.`);
  return field;
}

/** `pets(…)`, its arguments the tool's. */
function listPets(schema: GraphQLSchema): ToolSpec {
  const pets = rootField(schema, OperationTypeNode.QUERY, 'pets');
  const variables = pets.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const passed = pets.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const { text, output } = operationOf(
    schema,
    `query ListPets(${variables}) { pets(${passed})${selectionOf(pets.type)} }`,
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

/**
 * Why a document may not run through run_query, pointing to `writeToolNames` (the tools that change
 * the store); undefined when it is queries only (or does not parse: Yoga words that).
 */
export function notReadOnly(query: string, writeToolNames: readonly string[]): string | undefined {
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
  const writes =
    writeToolNames.length > 0
      ? `To change the store use ${writeToolNames.join(' or ')}`
      : 'No tool here changes the store';
  return `run_query is read-only: this document holds a ${kinds[0]}. ${writes}; subscriptions are not offered to assistants.`;
}

/**
 * run_query, whose description points to the schema resource only where one is offered
 * (introspection on), and whose refusal of a mutation to the tools that change the store.
 */
const runQuery = (schemaOffered: boolean, writeToolNames: readonly string[]): ToolSpec => ({
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
    const refused = notReadOnly(query, writeToolNames);
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
  const writes = writeTools(schema);
  const writeNames = writes.map((tool) => tool.name);
  const tools = [listPets(schema), ...writes, runQuery(schemaOffered, writeNames)];
  // A mutation named like another tool (`listPets`) would fail every request as the SDK registers
  // both: refused once, as the gateway starts.
  const names = tools.map((tool) => tool.name);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) throw new Error(`Two MCP tools would be named ${twice}: rename a field.`);
  return tools;
}
