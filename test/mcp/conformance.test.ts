// @tier ci: the MCP project's own conformance suite against npm start, both requirement sets (about 15 s)

import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { spawnWatched } from '../support/process.ts';

// The suite connects as an MCP client with no key; a proxy adds one, as a client's configuration
// would, and leaves Host and Origin as the suite sent them. Each requirement set runs with the
// list of checks the gateway does not pass and why (conformance/expected-failures-*.yml): the run
// fails on any other failure, and on a listed check that has started passing.

const KEY = 'conformance-key-0123456789';
const SUITE = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

let gateway: StartedGateway;
let proxy: Server;
let proxied: string;

/** Forwards every request to the gateway with the key added, nothing else changed. */
function keyProxy(target: URL): Server {
  return createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${KEY}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
}

beforeAll(async () => {
  gateway = await npmStart({ PETSTORE_API_KEY: KEY, LOG_LEVEL: 'warn' });
  proxy = keyProxy(new URL(gateway.origin)).listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  proxied = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
}, 30_000);

afterAll(async () => {
  proxy?.close();
  await gateway?.stop();
});

describe("the MCP project's conformance suite", () => {
  for (const revision of ['2025-11-25', '2026-07-28']) {
    it(`passes ${revision}'s requirements but for the listed fixtures and undeclared capabilities`, async () => {
      const expected = fileURLToPath(
        new URL(`conformance/expected-failures-${revision}.yml`, import.meta.url),
      );
      const suite = spawnWatched(
        process.execPath,
        [SUITE, 'server', '--url', proxied, '--requirements', revision, '--expected-failures', expected],
        { name: `conformance ${revision}`, inheritEnv: true },
      );
      const code = await suite.exited;
      const output = suite.output();
      expect(output, output).toMatch(/Baseline check passed: all failures are expected/);
      expect(code, output).toBe(0);
      const [, passed] = /Total: (\d+) passed/.exec(output) ?? [];
      expect(Number(passed)).toBeGreaterThan(revision === '2026-07-28' ? 100 : 35);
    }, 120_000);
  }
});
