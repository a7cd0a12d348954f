import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on a free loopback port with keep-alive longer than any run, and returns the origin. */
export async function listenLoopback(server: Server): Promise<string> {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
