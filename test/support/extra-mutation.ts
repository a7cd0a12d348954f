import { type GraphQLFieldConfig, GraphQLObjectType, GraphQLSchema } from 'graphql';
import type { Context } from '../../src/schema/context.ts';

/**
 * `base` with one more mutation field, a test's own: spread with `fromUpstream(writeThrough(…))` as
 * a Pothos field spreads it (the declaration in its extensions, for the plan and the MCP tools, and
 * the resolver derived from it). Made with graphql-js from the built schema, so the shared Pothos
 * builder (other test files' schema, in the same worker) stays untouched and the public schema
 * never holds it.
 */
export function withMutation(
  base: GraphQLSchema,
  name: string,
  // biome-ignore lint/suspicious/noExplicitAny: a resolver typed by its own field's arguments
  field: GraphQLFieldConfig<unknown, Context, any>,
): GraphQLSchema {
  const config = base.toConfig();
  const mutation = base.getMutationType() as GraphQLObjectType;
  const extended = new GraphQLObjectType({
    ...mutation.toConfig(),
    fields: { ...mutation.toConfig().fields, [name]: field },
  });
  return new GraphQLSchema({
    ...config,
    mutation: extended,
    types: config.types.map((type) => (type === mutation ? extended : type)),
  });
}
