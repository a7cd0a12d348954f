import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { type GraphQLSchema, parse, print, visit } from 'graphql';

/**
 * The schema as SDL with the directives its fields carry (`@cost`, `@listSize`, `@deprecated`),
 * which graphql-js's printSchema leaves out: what schema/schema.graphql holds and MCP's schema
 * resource serves. Only directives the schema itself defines are kept: the federation plugin's
 * `@key` belongs to the subgraph's SDL (subgraph.ts), not to the public one.
 */
export function printSdl(schema: GraphQLSchema): string {
  const defined = new Set(schema.getDirectives().map((directive) => directive.name));
  // Read from the AST nodes: Pothos keeps its own list form of the directives in `extensions`.
  const text = printSchemaWithDirectives(schema, { pathToDirectivesInExtensions: ['none'] });
  const kept = visit(parse(text), {
    Directive: (node) => (defined.has(node.name.value) ? undefined : null),
    SchemaDefinition: (node) => (isDefault(node) ? null : undefined),
  });
  return print(kept);
}

/** `schema { query: Query … }` with the default names says nothing: printSchema leaves it out too. */
function isDefault(node: {
  operationTypes: readonly { operation: string; type: { name: { value: string } } }[];
}) {
  const names: Record<string, string> = {
    query: 'Query',
    mutation: 'Mutation',
    subscription: 'Subscription',
  };
  return node.operationTypes.every((t) => names[t.operation] === t.type.name.value);
}
