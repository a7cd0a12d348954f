import { Kind, OperationTypeNode, parse } from 'graphql';
import { z } from 'zod';
import { LIST_LIMIT, PET_STATUSES, PET_SUNSET_DAY } from '../contract/animal-store.ts';
import type { ToolSpec } from './tool.ts';

/*
 * The tools offered without a trusted-documents manifest: the two things analysts do most (list,
 * create), each a fixed document the gateway knows, and a read-only query tool for everything else.
 */

const STATUSES = PET_STATUSES.map((status) => status.toUpperCase()) as [string, ...string[]];

/** Ids are int64: a JSON number would round them past 2^53, so they travel as decimal strings. */
export const int64String = () =>
  z
    .string()
    .regex(/^-?\d{1,19}$/)
    .describe('A 64-bit integer as a decimal string (never a JSON number: it would lose digits).');

const pet = z.object({
  id: int64String(),
  name: z.string(),
  categoryId: int64String(),
  status: z.enum(STATUSES).nullable(),
});

const PET_FIELDS = 'id name categoryId status';

const listPets: ToolSpec = {
  name: 'list_pets',
  title: 'List pets',
  description: `Lists the animals in the store for the caller's API key, optionally only those with one status (AVAILABLE, PENDING, SOLD), at most ${LIST_LIMIT.max} (default ${LIST_LIMIT.default}). Ids are 64-bit integers as strings. There is no paging past the first ${LIST_LIMIT.max} and no lookup by id: filter by status instead.`,
  input: {
    status: z.enum(STATUSES).optional().describe('Only animals with this status.'),
    limit: z
      .number()
      .int()
      .min(LIST_LIMIT.min)
      .max(LIST_LIMIT.max)
      .optional()
      .describe(
        `How many animals at most, ${LIST_LIMIT.min} to ${LIST_LIMIT.max}; ${LIST_LIMIT.default} when omitted.`,
      ),
  },
  output: { pets: z.array(pet) },
  readOnly: true,
  request: (args) => ({
    query: `query ListPets($status: PetStatus, $limit: Int) { pets(status: $status, limit: $limit) { ${PET_FIELDS} } }`,
    operationName: 'ListPets',
    variables: args,
  }),
};

const createPet: ToolSpec = {
  name: 'create_pet',
  title: 'Create a pet',
  description:
    "Adds an animal to the store with the caller's API key (sent once, never retried). Ask the user before calling it. The name must not be blank; categoryId is a 64-bit integer as a string. Returns the animal with the id the store gave it.",
  input: {
    name: z.string().describe("The animal's name (1 to 200 characters once trimmed)."),
    categoryId: int64String().describe(
      'The category the animal belongs to: a 64-bit integer as a decimal string.',
    ),
    status: z.enum(STATUSES).optional().describe('Availability; the store sets none when omitted.'),
  },
  output: { createPet: pet },
  readOnly: false,
  request: (args) => ({
    query: `mutation CreatePet($input: NewPetInput!) { createPet(input: $input) { ${PET_FIELDS} } }`,
    operationName: 'CreatePet',
    variables: { input: args },
  }),
};

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

/** The tools without a manifest, and beside a manifest in `allow` mode; `schemaOffered`: introspection on. */
export function builtInTools(schemaOffered: boolean): readonly ToolSpec[] {
  return [listPets, createPet, runQuery(schemaOffered)];
}
