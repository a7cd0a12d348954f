import { printSubgraphSchema } from '@apollo/subgraph';
import {
  type ExecutionArgs,
  type GraphQLFieldConfig,
  type GraphQLFieldResolver,
  GraphQLObjectType,
  GraphQLSchema,
  getOperationAST,
  isUnionType,
  Kind,
  lexicographicSortSchema,
  valueFromASTUntyped,
} from 'graphql';
import { builder } from './builder.ts';
import type { Context } from './context.ts';
import { badUserInput, representationsLimitExceeded } from './errors.ts';
import './pet.ts';

/**
 * Federation 2.9, the first with the cost directives, imported so a supergraph (Apollo Router,
 * Cosmo, Hive) prices our fields as we do; spelled out, so a plugin upgrade cannot change the
 * committed SDL unseen.
 */
const FEDERATION_LINK = 'https://specs.apollo.dev/federation/v2.9';
const FEDERATION_DIRECTIVES = ['@cost', '@key', '@listSize'];

type Representations = { representations: readonly unknown[] };

/** The schema as an Apollo Federation v2 subgraph, and the SDL composition reads from it. */
export interface Subgraph {
  /** The public schema plus `_service`, `_entities` and `Pet @key(fields: "id")`. */
  schema: GraphQLSchema;
  /** What `_service { sdl }` answers and schema/subgraph.graphql holds. */
  sdl: string;
}

let built: Subgraph | undefined;

/**
 * The subgraph schema (FEDERATION=on), from the Pothos federation plugin, with `_entities` held to
 * the same limits as every other field (see `limitEntities`). Built on first use, once per
 * process: a gateway with federation off never pays for it.
 */
export function subgraph(): Subgraph {
  if (!built) {
    const schema = limitEntities(
      builder.toSubGraphSchema({
        sortSchema: true,
        linkUrl: FEDERATION_LINK,
        federationDirectives: FEDERATION_DIRECTIVES,
      }),
    );
    built = { schema, sdl: printSubgraphSchema(schema) };
  }
  return built;
}

/**
 * The plugin builds `_entities` outside Pothos: this sizes it for pricing by its representations
 * and guards its resolver (their number and shapes).
 */
function limitEntities(schema: GraphQLSchema): GraphQLSchema {
  const query = schema.getQueryType();
  if (!query) throw new Error('the subgraph schema has no Query type');
  const config = query.toConfig();
  const entities = config.fields._entities as GraphQLFieldConfig<unknown, Context, Representations>;
  const union = schema.getType('_Entity');
  const entityTypes = new Set(isUnionType(union) ? union.getTypes().map((type) => type.name) : []);
  const resolve = entities.resolve as GraphQLFieldResolver<unknown, Context, Representations>;
  const limitedQuery = new GraphQLObjectType({
    ...config,
    fields: {
      ...config.fields,
      _entities: {
        ...entities,
        // Priced as a list as long as its representations (execution/cost.ts counts a list-valued
        // slicing argument by its length), so 10,000 of them are refused before anything runs.
        extensions: {
          ...entities.extensions,
          directives: [{ name: 'listSize', args: { slicingArguments: ['representations'] } }],
        },
        resolve: (root, args, ctx, info) => {
          checkCount(args.representations, ctx);
          checkShapes(args.representations, entityTypes);
          return resolve(root, args, ctx, info);
        },
      },
    },
  });
  const schemaConfig = schema.toConfig();
  return lexicographicSortSchema(
    new GraphQLSchema({
      ...schemaConfig,
      query: limitedQuery,
      types: schemaConfig.types.filter((type) => type !== query),
    }),
  );
}

/**
 * Refuses an operation whose `_entities` field carries more representations than the limit before
 * anything runs, ahead of its cost (which they would also exceed): the more precise refusal, and
 * no sibling root field calls the upstream. Yoga's lane runs it before pricing (yoga/request/cost.ts).
 */
export function refuseOversizedEntities(args: ExecutionArgs): void {
  const operation = getOperationAST(args.document, args.operationName);
  for (const selection of operation?.selectionSet.selections ?? []) {
    if (selection.kind !== Kind.FIELD || selection.name.value !== '_entities') continue;
    const given = selection.arguments?.find((argument) => argument.name.value === 'representations');
    const value = given && valueFromASTUntyped(given.value, args.variableValues ?? {});
    if (Array.isArray(value)) checkCount(value, args.contextValue as Context);
  }
}

function checkCount(representations: readonly unknown[], ctx: Context): void {
  if (representations.length > ctx.maxRepresentations) {
    throw representationsLimitExceeded(representations.length, ctx.maxRepresentations);
  }
}

/**
 * `_Any` accepts any value; the plugin's resolver would fail on a non-object or an unknown
 * `__typename` with an internal error. A router never sends either: this is a caller's mistake.
 */
function checkShapes(representations: readonly unknown[], entityTypes: ReadonlySet<string>): void {
  for (const representation of representations) {
    const typename =
      typeof representation === 'object' && representation !== null
        ? (representation as { __typename?: unknown }).__typename
        : undefined;
    if (typeof typename !== 'string' || !entityTypes.has(typename)) {
      throw badUserInput(
        `Every representation must be an object whose __typename is one of: ${[...entityTypes].join(', ')}.`,
        'representations',
      );
    }
  }
}
