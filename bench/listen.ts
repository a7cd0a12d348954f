import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
