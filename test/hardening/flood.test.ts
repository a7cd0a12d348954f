// @tier ci: 5,000 hostile requests as fast as they go, then this process's heap against its start

import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/edge/listener.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.ts';
import { createYogaServer } from '../../src/yoga/server.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { CORPUS_AUTH, CORPUS_TOKEN, type FetchSend, hostileCorpus } from './corpus.ts';
import { send } from './send.ts';

// A flood of hostile requests over keep-alive connections, then: is the heap back near where it
// started, is every connection closed, does a normal query still work?

const FLOOD = 5000;
const CONCURRENCY = 16;
const HEAP_SLACK_MB = 30;

/** `global.gc` without --expose-gc: the flag can still be set at run time, then read from a fresh context. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

async function settledHeap(gc: () => void): Promise<number> {
  for (let i = 0; i < 4; i++) {
    await sleep(25);
    gc();
  }
  return process.memoryUsage().heapUsed;
}

let upstream: FakeUpstream;
let client: UpstreamClient;
let server: Server;
let url: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(CORPUS_TOKEN);
  client = createUpstreamClient({ baseUrl: new URL(upstream.url), timeoutMs: 2000, connections: 16 });
  server = createHttpServer(createYogaServer({ upstream: client, logger: createLogger('silent') }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/graphql`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await client?.close();
  await upstream?.close();
});

/** The corpus' keep-alive requests under 100 KB: sent round-robin by the flood. */
const fetchCases = hostileCorpus().filter(
  (c): c is typeof c & { send: FetchSend } =>
    c.send.kind === 'fetch' && (c.send.body?.length ?? 0) < 100_000 && !c.knownBug,
);
const rawCases = hostileCorpus().filter((c) => c.send.kind === 'raw' && !c.knownBug);

/** A client that sends the first bytes of a body and then goes away. */
function abandon(): Promise<void> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: g\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"query":"{ __typename`,
      );
      setTimeout(() => socket.destroy(), 5);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}

describe('flood', () => {
  // Its own bound: the flood alone takes most of the default 20 s on a loaded 2-core machine.
  it(`answers ${FLOOD} hostile requests over keep-alive without 5xx, then frees its memory`, {
    timeout: 60_000,
  }, async () => {
    const gc = collector();
    const agent = new Agent({ connections: CONCURRENCY, pipelining: 1 });
    const statuses = new Map<number, number>();
    const fire = async (i: number) => {
      const c = fetchCases[i % fetchCases.length] as (typeof fetchCases)[number];
      const response = await undiciFetch(c.send.search ? `${url}?${c.send.search}` : url, {
        method: c.send.method,
        headers: c.send.headers,
        ...(c.send.body === undefined
          ? {}
          : { body: typeof c.send.body === 'string' ? c.send.body : new Uint8Array(c.send.body) }),
        dispatcher: agent,
      });
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    };
    const run = async (count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < count) await fire(next++);
        }),
      );
    };

    await run(500); // warm up: JIT, pools, caches
    const baseline = await settledHeap(gc);

    await run(FLOOD);
    // Malformed HTTP and abandoned bodies on their own connections, beside the flood.
    for (const c of rawCases) {
      const answer = await send(url, c.send);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    }
    await Promise.all(Array.from({ length: 50 }, abandon));
    await agent.close();

    const after = await settledHeap(gc);
    const grownMb = (after - baseline) / 2 ** 20;
    console.log(
      `flood: ${FLOOD + 500} keep-alive + ${rawCases.length} raw + 50 abandoned requests; statuses ${JSON.stringify(
        Object.fromEntries(statuses),
      )}; heap ${(baseline / 2 ** 20).toFixed(1)} MB → ${(after / 2 ** 20).toFixed(1)} MB (${grownMb >= 0 ? '+' : ''}${grownMb.toFixed(1)} MB)`,
    );
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(grownMb).toBeLessThan(HEAP_SLACK_MB);
    expect(upstream.requests).toHaveLength(0);
  });

  it('has closed every client connection', async () => {
    let open = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 40 && open > 0; i++) {
      open = await new Promise<number>((resolve, reject) =>
        server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
      if (open > 0) await sleep(25);
    }
    expect(open).toBe(0);
  });

  it('still answers a normal authorized query', async () => {
    upstream.seed(CORPUS_TOKEN, { id: '42', name: 'Survivor', categoryId: '1' });
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: CORPUS_AUTH },
      body: JSON.stringify({ query: '{ pets(limit: 1) { id name } }' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { pets: [{ id: '42', name: 'Survivor' }] } });
  });
});
