import { printSubgraphSchema } from '@apollo/subgraph';
import {
  type GraphQLFieldConfig,
  type GraphQLFieldResolver,
  GraphQLObjectType,
  GraphQLSchema,
  isUnionType,
  lexicographicSortSchema,
} from 'graphql';
import { builder } from './builder.ts';
import type { Context } from './context.ts';
import { refuseOverCost } from './cost.ts';
import { badUserInput, representationsLimitExceeded } from './errors.ts';
import './pet.ts';

/** The plugin's default, spelled out: a plugin upgrade must not change the committed SDL unseen. */
const FEDERATION_LINK = 'https://specs.apollo.dev/federation/v2.6';

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
    const schema = limitEntities(builder.toSubGraphSchema({ sortSchema: true, linkUrl: FEDERATION_LINK }));
    built = { schema, sdl: printSubgraphSchema(schema) };
  }
  return built;
}

/**
 * The plugin builds `_entities` outside Pothos, so the complexity plugin neither prices it nor
 * checks the cost when it is an operation's only root field, which it is in every router fetch.
 * This prices it (each representation multiplies its selection, like a list's size) and guards its
 * resolver, so a request of 10,000 representations is refused before any upstream call.
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
        extensions: {
          ...entities.extensions,
          complexity: (args: Representations, ctx: Context) => {
            // Throwing here refuses the operation in whichever root field prices it first, so a
            // `pets` beside an oversized `_entities` makes no upstream call either.
            checkCount(args.representations, ctx);
            return { field: 1, multiplier: args.representations.length };
          },
        },
        resolve: (root, args, ctx, info) => {
          checkCount(args.representations, ctx);
          refuseOverCost(ctx, info);
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
