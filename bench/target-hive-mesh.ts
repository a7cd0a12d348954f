/**
 * Child process: Hive Gateway + a GraphQL Mesh OpenAPI source (see hive-mesh.ts) over the upstream,
 * behind node:http on a free loopback port. Env: UPSTREAM_URL (ending in /v1). Composes the
 * supergraph once, before it announces `<origin>/graphql`.
 */
import { createServer } from 'node:http';
import { announce, requireEnv } from './child.ts';
import { composeSupergraph, hiveGateway, hiveLogger } from './hive-mesh.ts';
import { keepAlive, listenLoopback } from './listen.ts';

const log = hiveLogger();
const gateway = hiveGateway(await composeSupergraph(new URL(requireEnv('UPSTREAM_URL')), log), log);
announce(`${await listenLoopback(keepAlive(createServer(gateway)))}/graphql`);
