/**
 * Hive Gateway with a GraphQL Mesh OpenAPI source, as a bench target: the way The Guild documents
 * serving a REST API as GraphQL. Mesh Compose (`@graphql-mesh/compose-cli`'s
 * getComposedSchemaFromConfig, what the `mesh-compose` command runs) turns the contract's own
 * `schema/openapi.yaml` into a supergraph through `@omnigraph/openapi`'s loadOpenAPISubgraph, and
 * `@graphql-hive/gateway-runtime`'s createGatewayRuntime serves it, resolving each field with
 * `@graphql-mesh/transport-rest` (which the runtime imports by itself from the supergraph's
 * `@transport(kind: "rest")`). Every option is left at its default but the two a user must set:
 * the upstream's address and the caller's Authorization, forwarded as Mesh's docs show.
 */

import { fileURLToPath } from 'node:url';
import { createGatewayRuntime, LegacyLogger, Logger } from '@graphql-hive/gateway-runtime';
import { getComposedSchemaFromConfig } from '@graphql-mesh/compose-cli';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';

/** The contract's OpenAPI document, which src/contract/ and the reference service are tested against. */
const OPENAPI = fileURLToPath(new URL('../schema/openapi.yaml', import.meta.url));

/** The source's name in the supergraph; no type or field is renamed after it. */
const SUBGRAPH = 'Pets';

/**
 * The supergraph SDL of the contract's REST API at `upstreamUrl` (ending in /v1), every request
 * carrying the caller's own Authorization (interpolated from the GraphQL context per request).
 * Composed once: the gateway then serves it as it would a file `mesh-compose` wrote.
 */
export function composeSupergraph(upstreamUrl: URL, log: Logger): Promise<string> {
  return getComposedSchemaFromConfig(
    {
      subgraphs: [
        {
          sourceHandler: loadOpenAPISubgraph(SUBGRAPH, {
            source: OPENAPI,
            endpoint: upstreamUrl.href.replace(/\/+$/, ''),
            operationHeaders: { Authorization: '{context.headers.authorization}' },
          }),
        },
      ],
    },
    LegacyLogger.from(log),
  );
}

/** Hive Gateway's runtime over `supergraph`, at its defaults (it serves `/graphql`). */
export function hiveGateway(supergraph: string, log: Logger) {
  return createGatewayRuntime({ supergraph, logging: log });
}

/** The logger both share: Hive Gateway's own, at its default level. */
export function hiveLogger(): Logger {
  return new Logger();
}
