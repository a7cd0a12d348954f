import { once } from 'node:events';
import type { Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';

/** Listens on a free loopback port and returns the origin. */
export async function listenLoopback(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Keep-alive as the gateway's own server has it (65 s), so no target drops a connection mid-run. */
export function keepAlive(server: Server): Server {
  server.keepAliveTimeout = 65_000;
  return server;
}

/**
 * A loopback port free right now, for a target that must be told its port (Tailcall's config, the
 * gateway's PORT) rather than report what port 0 gave it.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
