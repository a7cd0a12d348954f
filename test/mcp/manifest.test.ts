// @tier integration

import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { LIST_LIMIT } from '../../src/contract/animal-store.ts';
import { loadPersistedDocuments } from '../../src/yoga/request/persisted-documents.ts';
import { BIG_ID, type FakeUpstream, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { call, connectMcp, rawPost, textOf } from './client.ts';

const KEY = 'manifest-key';
const documents = loadPersistedDocuments(join(import.meta.dirname, '../generated/persisted-documents.json'));

describe('with PERSISTED_OPERATIONS=require', () => {
  let gateway: RunningGateway;
  let upstream: FakeUpstream;
  let client: Client;
  useGateway(
    {
      tokens: [KEY],
      seed: (fake) => seedPets(fake, KEY),
      gateway: { gateway: { persistedOperations: { mode: 'require', documents } } },
    },
    (started) => ({ gateway, upstream } = started),
  );
  beforeAll(async () => {
    client = await connectMcp(gateway.origin, KEY);
  });
  afterAll(async () => client?.close());

  it("offers each of the manifest's operations as a tool, named after it, and no free query", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'create_pet',
      'get_pet',
      'list_pets',
      'list_pets_default',
      'repeated_pet',
      'repeated_pets',
    ]);
  });

  it("derives each tool's input from the operation's variables: ids as strings, enums as their values, limit's bounds", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const list = byName.get('list_pets')?.inputSchema;
    expect(list?.properties?.limit).toMatchObject({
      type: 'integer',
      minimum: LIST_LIMIT.min,
      maximum: LIST_LIMIT.max,
    });
    expect(list?.properties?.status).toMatchObject({ enum: ['AVAILABLE', 'PENDING', 'SOLD'] });
    expect(list?.required ?? []).toEqual([]);
    const get = byName.get('get_pet');
    expect(get?.inputSchema.properties?.id).toMatchObject({ type: 'string' });
    expect(get?.inputSchema.required).toEqual(['id']);
    expect(get?.description).toMatch(/deprecated/i);
    const create = byName.get('create_pet')?.inputSchema.properties?.input as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(create.properties).sort()).toEqual(['categoryId', 'name', 'status']);
    expect(byName.get('list_pets')?.outputSchema?.properties).toHaveProperty('pets');
    // From the operation type: a query reads; the mutation adds a pet, and each call adds another.
    expect(byName.get('get_pet')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(byName.get('create_pet')?.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    });
  });

  it('runs a manifest tool by its document id, the int64 id exact', async () => {
    const result = await call(client, 'list_pets', { limit: 5 });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain(`"id":"${BIG_ID}"`);
    const one = await call(client, 'get_pet', { id: BIG_ID });
    expect(one.structuredContent).toMatchObject({ pet: { id: BIG_ID, name: 'Rex' } });
  });

  it('refuses a variable or input field the operation does not declare, as GraphQL would, with nothing sent', async () => {
    const misspelled = await call(client, 'get_pet', { id: BIG_ID, idd: '2' });
    expect(misspelled.isError).toBe(true);
    expect(textOf(misspelled)).toContain('idd');
    // Inside an input object too: GraphQL refuses a field NewPetInput does not have; dropped, the
    // pet would be created without the status the assistant meant to give it.
    const nested = await call(client, 'create_pet', {
      input: { name: 'Kit', categoryId: '1', stauts: 'SOLD' },
    });
    expect(nested.isError).toBe(true);
    expect(textOf(nested)).toContain('stauts');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('with RATE_LIMIT_PER_MINUTE=5', () => {
  let gateway: RunningGateway;
  useGateway(
    {
      tokens: [KEY],
      seed: (fake) => seedPets(fake, KEY),
      gateway: { config: { rateLimit: { perMinute: 5, store: 'memory', refusedKeysPerMinute: 60 } } },
    },
    (started) => ({ gateway } = started),
  );

  it('answers the fourth tool call of the minute with a tool error about the rate limit', async () => {
    // Connecting is two messages of the minute (initialize, then notifications/initialized).
    const client = await connectMcp(gateway.origin, KEY);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await call(client, 'list_pets', { limit: 1 }));
    expect(results.map((result) => result.isError ?? false)).toEqual([false, false, false, true]);
    expect(textOf(results[3] as (typeof results)[number])).toMatch(/RATE_LIMITED.*|Too many requests/);
    expect(textOf(results[3] as (typeof results)[number])).toContain('RATE_LIMITED');
    await client.close();
  });
});

describe('a JSON-RPC batch of tool calls', () => {
  const BATCH_KEY = 'mcp-batch-key';
  let gateway: RunningGateway;
  useGateway(
    {
      tokens: [BATCH_KEY],
      seed: (fake) => seedPets(fake, BATCH_KEY),
      gateway: {
        config: {
          rateLimit: { perMinute: 3, store: 'memory', refusedKeysPerMinute: 60 },
          limits: { ...DEFAULT_LIMITS, maxBatchOperations: 4 },
        },
      },
    },
    (started) => ({ gateway } = started),
  );
  const calls = (count: number) =>
    Array.from({ length: count }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'list_pets', arguments: { limit: 1 } },
    }));

  it('refuses more messages than MAX_BATCH_OPERATIONS, before any runs', async () => {
    const response = await rawPost(gateway.origin, { authorization: `Bearer ${BATCH_KEY}` }, calls(5));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error?: { code?: number; message?: string } };
    expect(body.error?.code).toBe(-32600);
    expect(body.error?.message).toContain('MAX_BATCH_OPERATIONS');
  });

  it('counts each tool call against the rate limit, as a request to /graphql would be', async () => {
    const response = await rawPost(gateway.origin, { authorization: `Bearer ${BATCH_KEY}` }, calls(4));
    expect(response.status).toBe(200);
    const results = (await response.json()) as Array<{ result?: CallToolResult }>;
    const refused = results.filter((entry) => entry.result?.isError);
    expect(results).toHaveLength(4);
    expect(refused).toHaveLength(1);
    expect(textOf(refused[0]?.result as CallToolResult)).toContain('RATE_LIMITED');
  });
});
