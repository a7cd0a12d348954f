// @tier integration

import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import {
  type Client2026,
  call,
  connectMcp,
  connectMcp2026,
  INITIALIZE,
  modernPost,
  rawPost,
  textOf,
} from './client.ts';

// Both revisions on one /mcp: 2025-11-25 clients (the SDK's 1.x client, mcp-remote) and
// 2026-07-28's stateless ones (the SDK's 2.x client), each served by the revision it speaks.

const KEY = 'revisions-key';
const auth = { authorization: `Bearer ${KEY}` };
let gateway: RunningGateway;
let upstream: FakeUpstream;
const lines: string[] = [];
useGateway(
  {
    tokens: [KEY],
    seed: (fake) => seedPets(fake, KEY),
    gateway: {
      gateway: { logger: createLogger('info', { write: (line: string) => void lines.push(line) }) },
    },
  },
  (started) => ({ gateway, upstream } = started),
);

const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(opened.map((client) => client.close()));
});
async function modern(confirm?: Parameters<typeof connectMcp2026>[2]): Promise<Client2026> {
  const client = await connectMcp2026(gateway.origin, KEY, confirm);
  opened.push(client);
  return client;
}
const postsOf = () => upstream.requests.filter((request) => request.method === 'POST').length;

describe('2026-07-28, stateless', () => {
  // 2025-11-25 is offered by `initialize`, as the SDK's discover says: it lists the stateless revisions only.
  it('answers server/discover with its revision and the tools capability, no session', async () => {
    const response = await modernPost(gateway.origin, auth, 'server/discover');
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const { result } = await response.json();
    expect(result.supportedVersions).toEqual(['2026-07-28']);
    expect(result.capabilities).toHaveProperty('tools');
  });

  it('lists tools with caching hints a shared cache may keep: the same lists for every caller', async () => {
    const { result } = await (await modernPost(gateway.origin, auth, 'tools/list')).json();
    expect(result.tools.map((tool: { name: string }) => tool.name)).toContain('list_pets');
    expect(result.cacheScope).toBe('public');
    expect(result.ttlMs).toBeGreaterThan(0);
  });

  it("serves the SDK's 2.x client: list_pets answers the caller's pets", async () => {
    const client = await modern();
    const result = await client.callTool({ name: 'list_pets', arguments: { limit: 2 } });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { pets: unknown[] }).pets).toHaveLength(2);
    // Its name rides in each request's _meta: the tool call's line names it, as a 2025 session's does.
    const line = lines.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'mcp tool call');
    expect(line).toMatchObject({ tool: 'list_pets', client: 'vitest-assistant-2026', outcome: 'ok' });
  });

  it('refuses a request whose Mcp-Method header disagrees with its body: 400, -32020, its id', async () => {
    const response = await modernPost(
      gateway.origin,
      { ...auth, 'mcp-method': 'tools/call' },
      'tools/list',
      {},
      41,
    );
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe(-32020);
    expect(body.id).toBe(41);
  });

  it('answers initialize, a method the revision removed, with -32601 and 404', async () => {
    const response = await modernPost(gateway.origin, auth, 'initialize', INITIALIZE.params, 42);
    expect(response.status).toBe(404);
    const body = await response.json();
    expect([body.error.code, body.id]).toEqual([-32601, 42]);
  });
});

describe('an unknown tool is a protocol error (-32602) under both revisions', () => {
  it('2026-07-28', async () => {
    const response = await modernPost(
      gateway.origin,
      auth,
      'tools/call',
      { name: 'no_such_tool', arguments: {} },
      7,
    );
    const body = await response.json();
    expect([body.error?.code, body.id]).toEqual([-32602, 7]);
    expect(body.error.message).toMatch(/no_such_tool/);
  });

  it('2025-11-25', async () => {
    const body = {
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'no_such_tool', arguments: {} },
    };
    const answer = await (await rawPost(gateway.origin, auth, body)).json();
    expect([answer.error?.code, answer.id]).toEqual([-32602, 8]);
  });
});

describe("the gateway's own refusals echo a readable request's id", () => {
  const listTools = { jsonrpc: '2.0', id: 'call-9', method: 'tools/list' };

  it('401 without a key', async () => {
    const response = await rawPost(gateway.origin, {}, listTools);
    expect(response.status).toBe(401);
    expect((await response.json()).id).toBe('call-9');
  });

  it('403 for an origin not admitted', async () => {
    const response = await rawPost(gateway.origin, { ...auth, origin: 'http://evil.example' }, listTools);
    expect(response.status).toBe(403);
    expect((await response.json()).id).toBe('call-9');
  });

  it('null for a body that cannot be read (not JSON), as JSON-RPC says', async () => {
    const response = await rawPost(gateway.origin, auth, '{"id": 3,');
    expect((await response.json()).id).toBeNull();
  });
});

/** A POST with the Host and Origin a browser page would send (fetch may not set Host). */
function postAs(host: string, origin: string): Promise<number> {
  const target = new URL(gateway.origin);
  const body = JSON.stringify(INITIALIZE);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: '/mcp',
        method: 'POST',
        headers: {
          ...auth,
          host,
          origin,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('loopback origins on a loopback listener', () => {
  it("admits a page of the gateway's own address and port, and refuses another port's and a rebound name", async () => {
    const { port } = new URL(gateway.origin);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect(await postAs(host, `http://${host}`), host).toBe(200);
    }
    expect(await postAs(`localhost:${port}`, `http://localhost:${Number(port) + 1}`)).toBe(403);
    expect(await postAs(`evil.example:${port}`, `http://evil.example:${port}`)).toBe(403);
  });
});

describe('create_pet asks its user first (input required), where the client can ask', () => {
  it('creates nothing until the user accepts, then exactly the pet they were shown', async () => {
    const asked: string[] = [];
    const client = await modern((message) => {
      asked.push(message);
      return 'accept';
    });
    const before = postsOf();
    const result = await client.callTool({ name: 'create_pet', arguments: { name: 'Rex', categoryId: '2' } });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/Rex/);
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { createPet: { name: string } }).createPet.name).toBe('Rex');
    expect(postsOf()).toBe(before + 1);
  });

  it('sends nothing upstream when the user declines, and says so', async () => {
    const client = await modern(() => 'decline');
    const before = postsOf();
    const result = await client.callTool({
      name: 'create_pet',
      arguments: { name: 'Nope', categoryId: '2' },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/declined|not created/i);
    expect(postsOf()).toBe(before);
  });

  it('refuses a tampered requestState, and one moved to other arguments, creating nothing', async () => {
    const elicitation = { elicitation: { form: {} } };
    const first = await modernPost(
      gateway.origin,
      auth,
      'tools/call',
      { name: 'create_pet', arguments: { name: 'Rex', categoryId: '2' } },
      1,
      elicitation,
    );
    const { result } = await first.json();
    expect(result.resultType).toBe('input_required');
    const state: string = result.requestState;
    const before = postsOf();
    const accepted = { confirm: { action: 'accept', content: { confirm: true } } };
    for (const [requestState, args] of [
      [`${state.slice(0, -2)}xx`, { name: 'Rex', categoryId: '2' }],
      [state, { name: 'Max', categoryId: '2' }],
    ] as const) {
      const retry = await modernPost(
        gateway.origin,
        auth,
        'tools/call',
        { name: 'create_pet', arguments: args, inputResponses: accepted, requestState },
        2,
        elicitation,
      );
      const body = await retry.json();
      expect(body.error?.code ?? body.result?.isError, JSON.stringify(body)).toSatisfy(
        (outcome: unknown) => outcome === -32602 || outcome === true,
      );
    }
    expect(postsOf()).toBe(before);
  });

  it("a client that cannot be asked (the SDK's 1.x client) creates as before, without a question", async () => {
    const client = await connectMcp(gateway.origin, KEY, 'legacy-assistant');
    opened.push(client);
    const result = await call(client, 'create_pet', { name: 'Old', categoryId: '2' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect((result.structuredContent as { createPet: { name: string } }).createPet.name).toBe('Old');
  });
});

describe("2026-07-28 under the gateway's rules, as 2025-11-25", () => {
  it('answers discovery to a key the upstream refuses, and refuses it anything else: 401, its id', async () => {
    const wrong = { authorization: 'Bearer not-a-key-of-the-store' };
    expect((await modernPost(gateway.origin, wrong, 'server/discover')).status).toBe(200);
    const refused = await modernPost(gateway.origin, wrong, 'tools/list', {}, 'list-1');
    expect(refused.status).toBe(401);
    expect((await refused.json()).id).toBe('list-1');
  });

  it('runs no mutation through run_query', async () => {
    const before = postsOf();
    const response = await modernPost(gateway.origin, auth, 'tools/call', {
      name: 'run_query',
      arguments: { query: 'mutation { createPet(input: {name: "Sneaky", categoryId: "1"}) { id } }' },
    });
    const { result } = await response.json();
    expect(result.isError).toBe(true);
    expect(postsOf()).toBe(before);
  });
});

describe('2026-07-28 under the rate limit and INTROSPECTION=off', () => {
  const LIMITED = 'limited-key';
  let limited: RunningGateway;
  useGateway(
    {
      tokens: [LIMITED],
      gateway: {
        config: {
          introspection: false,
          rateLimit: { perMinute: 3, store: 'memory', refusedKeysPerMinute: 60 },
        },
      },
    },
    (started) => ({ gateway: limited } = started),
  );
  const key = { authorization: `Bearer ${LIMITED}` };

  it('offers no schema resource: resources/list is -32601', async () => {
    const body = await (await modernPost(limited.origin, key, 'resources/list', {}, 5)).json();
    expect([body.error?.code, body.id]).toEqual([-32601, 5]);
  });

  it('counts each request: a tool call over the limit is a RATE_LIMITED tool error, a list 429 with its id', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await modernPost(limited.origin, key, 'tools/call', {
        name: 'list_pets',
        arguments: { limit: 1 },
      });
      const { result } = await response.json();
      outcomes.push(result.isError ? JSON.stringify(result.content) : 'ok');
    }
    expect(outcomes.at(-1)).toMatch(/RATE_LIMITED/);
    const list = await modernPost(limited.origin, key, 'tools/list', {}, 'over');
    expect(list.status).toBe(429);
    expect(list.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await list.json()).id).toBe('over');
  });
});
