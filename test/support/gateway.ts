import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway } from '../../src/server.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';

export interface RunningGateway {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:1234/graphql */
  url: string;
  origin: string;
  close(): Promise<void>;
}

/** Starts the real gateway on a free loopback port, talking to `upstreamUrl`, as `main.ts` wires it. */
export async function startGateway(options: {
  upstreamUrl: string;
  timeoutMs?: number;
}): Promise<RunningGateway> {
  const upstream = createUpstreamClient({
    baseUrl: new URL(options.upstreamUrl),
    timeoutMs: options.timeoutMs ?? 2000,
    connections: 16,
  });
  const server = createServer(createGateway({ upstream }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/graphql`,
    origin,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await upstream.close();
    },
  };
}
