import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { type Context, createContext } from './context.ts';
import { schema } from './schema/index.ts';
import type { UpstreamClient } from './upstream/client.ts';

export interface GatewayOptions {
  /** The REST v1 client; the gateway never creates connections of its own. */
  upstream: UpstreamClient;
  /** Prefilled in GraphiQL's header editor, e.g. the embedded service's development key. */
  graphiqlAuthorization?: string;
}

export type Gateway = YogaServerInstance<Record<string, never>, Context>;

const EXAMPLE_QUERY = `# Animals on offer. Press the run button (or Ctrl-Enter).
query AvailablePets {
  pets(status: AVAILABLE, limit: 10) {
    id
    name
    categoryId
    status
  }
}
`;

/**
 * Builds the gateway: GraphQL (and GraphiQL) at `/graphql`, liveness at `/health`. Reads no
 * environment and opens no port; `main.ts` does both.
 */
export function createGateway(options: GatewayOptions): Gateway {
  const headers = options.graphiqlAuthorization
    ? { Authorization: options.graphiqlAuthorization }
    : { Authorization: 'Bearer <your API key>' };
  return createYoga<Record<string, never>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    // Unexpected errors are masked; GraphQLErrors we raise on purpose (codes from the one mapping
    // table in upstream/errors.ts) pass through.
    maskedErrors: true,
    graphiql: { title: 'Animal store', defaultQuery: EXAMPLE_QUERY, headers: JSON.stringify(headers) },
    context: ({ request }) => createContext(request, options.upstream),
  });
}
