/**
 * Hive Gateway with a GraphQL Mesh OpenAPI source, the way The Guild documents serving a REST API as
 * GraphQL: Mesh Compose (what `mesh-compose` runs) turns the contract's own `schema/openapi.yaml`
 * into a supergraph through `@omnigraph/openapi`, and `@graphql-hive/gateway-runtime` serves it,
 * resolving each field with `@graphql-mesh/transport-rest`. Every option at its default but the two a
 * user must set: the upstream's address and the caller's Authorization, forwarded as Mesh's docs show.
 */
import { fileURLToPath } from 'node:url';
import { createGatewayRuntime, LegacyLogger, Logger } from '@graphql-hive/gateway-runtime';
import { getComposedSchemaFromConfig } from '@graphql-mesh/compose-cli';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';

/** The supergraph SDL of the contract's REST API at `upstreamUrl` (ending in /v1), composed once. */
export function composeSupergraph(upstreamUrl: URL, log: Logger): Promise<string> {
  const sourceHandler = loadOpenAPISubgraph('Pets', {
    source: fileURLToPath(new URL('../schema/openapi.yaml', import.meta.url)),
    endpoint: upstreamUrl.href.replace(/\/+$/, ''),
    operationHeaders: { Authorization: '{context.headers.authorization}' },
  });
  return getComposedSchemaFromConfig({ subgraphs: [{ sourceHandler }] }, LegacyLogger.from(log));
}

/** Hive Gateway's runtime (serving `/graphql`) over the composed supergraph, with its own logger at its default level. */
export async function createHiveMesh(upstreamUrl: URL) {
  const logging = new Logger();
  return createGatewayRuntime({ supergraph: await composeSupergraph(upstreamUrl, logging), logging });
}
