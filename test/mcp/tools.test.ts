// @tier integration

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { GraphQLInputObjectType } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LIST_LIMIT } from '../../src/contract/animal-store.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { schema } from '../../src/schema/index.ts';
import { BIG_ID, type FakeUpstream, MAX_INT64, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { call, connectMcp, textOf } from './client.ts';

const ALICE = 'alice-key';
const BOB = 'bob-key';
const lines: string[] = [];
const metrics = createMetrics();

let upstream: FakeUpstream;
let gateway: RunningGateway;
useGateway(
  {
    tokens: [ALICE, BOB],
    seed: (fake) => {
      seedPets(fake, ALICE);
      fake.seed(BOB, { id: '77', name: 'Bobs Cat', categoryId: '5', status: 'sold' });
    },
    gateway: {
      gateway: { logger: createLogger('info', { write: (line: string) => void lines.push(line) }), metrics },
    },
  },
  (started) => ({ upstream, gateway } = started),
);

let alice: Client;
let bob: Client;
beforeAll(async () => {
  alice = await connectMcp(gateway.origin, ALICE, 'claude-desktop');
  bob = await connectMcp(gateway.origin, BOB);
  // As clients do once connected: the gateway checks each key with the upstream once, here, so
  // the tests below count only their own upstream calls.
  await alice.listTools();
  await bob.listTools();
});
afterAll(async () => {
  await alice?.close();
  await bob?.close();
});
beforeEach(() => {
  lines.length = 0;
});

describe('the MCP endpoint without a manifest', () => {
  it('lists list_pets, create_pet and run_query, with input and output schemas', async () => {
    const { tools } = await alice.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['create_pet', 'list_pets', 'run_query']);
    const list = tools.find((tool) => tool.name === 'list_pets');
    const limit = list?.inputSchema.properties?.limit as { minimum: number; maximum: number };
    expect([limit.minimum, limit.maximum]).toEqual([LIST_LIMIT.min, LIST_LIMIT.max]);
    expect(list?.inputSchema.properties?.status).toMatchObject({ enum: ['AVAILABLE', 'PENDING', 'SOLD'] });
    expect(list?.outputSchema?.properties).toHaveProperty('pets');
    const runQuery = tools.find((tool) => tool.name === 'run_query');
    expect(runQuery?.description).toMatch(/pet\(id\).*deprecated/s);
  });

  it("describes list_pets' and create_pet's arguments as the schema does, claiming no limit it does not state", async () => {
    const { tools } = await alice.listTools();
    const inputOf = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema;
    const newPet = schema.getType('NewPetInput') as GraphQLInputObjectType;
    const pets = schema.getQueryType()?.getFields().pets;
    const described = (fields: readonly { name: string; description?: string | null | undefined }[]) =>
      Object.fromEntries(fields.map((field) => [field.name, field.description]));
    const descriptions = (name: string) =>
      Object.fromEntries(
        Object.entries(inputOf(name)?.properties ?? {}).map(([key, value]) => [
          key,
          (value as { description?: string }).description,
        ]),
      );
    expect(descriptions('create_pet')).toEqual(described(Object.values(newPet.getFields())));
    expect(descriptions('list_pets')).toEqual(described(pets?.args ?? []));
    // The contract sets no name limits, nor does the schema: the tool says none.
    expect(inputOf('create_pet')?.properties?.name).not.toHaveProperty('maxLength');
  });

  it('gives every tool the four annotations: queries read only, create_pet an additive write a client asks before', async () => {
    const { tools } = await alice.listTools();
    const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    expect(Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]))).toEqual({
      list_pets: read,
      run_query: read,
      create_pet: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    });
  });

  it('declares what every schema value is: no `{}` that constrains nothing (the Inspector’s --strict warns on one)', async () => {
    const { tools } = await alice.listTools();
    const empty: string[] = [];
    // Keywords whose value is a map of schemas, not a schema: an empty one is no schema at all.
    const maps = /\.(properties|patternProperties|\$defs)$/;
    const walk = (schema: unknown, path: string): void => {
      if (typeof schema !== 'object' || schema === null) return;
      if (!Array.isArray(schema) && Object.keys(schema).length === 0 && !maps.test(path)) empty.push(path);
      for (const [key, value] of Object.entries(schema)) walk(value, `${path}.${key}`);
    };
    for (const tool of tools) {
      walk(tool.inputSchema, `${tool.name}.inputSchema`);
      walk(tool.outputSchema, `${tool.name}.outputSchema`);
    }
    expect(empty).toEqual([]);
  });

  it('declares no announcements of list changes, which a server living for one request never sends', () => {
    const capabilities = alice.getServerCapabilities();
    expect(capabilities?.tools?.listChanged).toBeFalsy();
    expect(capabilities?.resources?.listChanged).toBeFalsy();
  });

  it('offers the schema as a resource', async () => {
    const { resources } = await alice.listResources();
    expect(resources.map((resource) => resource.uri)).toContain('graphql://schema');
    const { contents } = await alice.readResource({ uri: 'graphql://schema' });
    expect((contents[0] as { text: string }).text).toContain('type Query');
  });

  it('lists sold pets, and every pet with the int64 id past 2^53 exact, as structured content and the same JSON as text', async () => {
    const sold = await call(alice, 'list_pets', { status: 'SOLD' });
    expect(sold.isError).toBeFalsy();
    expect(sold.structuredContent).toEqual({
      pets: [{ id: '2', name: 'Tom', categoryId: '1', status: 'SOLD' }],
    });
    expect(JSON.parse(textOf(sold))).toEqual(sold.structuredContent);
    const all = await call(alice, 'list_pets', { limit: 5 });
    expect(textOf(all)).toContain(`"id":"${BIG_ID}"`);
    expect(textOf(all)).toContain(`"categoryId":"${MAX_INT64}"`);
  });

  it("gets bob's pets with bob's key, and never alice's", async () => {
    const result = await call(bob, 'list_pets', {});
    expect(result.structuredContent).toEqual({
      pets: [{ id: '77', name: 'Bobs Cat', categoryId: '5', status: 'SOLD' }],
    });
    expect(upstream.requests.map((request) => request.authorization)).toEqual([`Bearer ${BOB}`]);
  });

  it('refuses a blank name as GraphQL does, BAD_USER_INPUT with no upstream call', async () => {
    const result = await call(alice, 'create_pet', { name: '   ', categoryId: '1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('BAD_USER_INPUT');
    expect(textOf(result)).toContain('must not be empty or blank');
    expect(upstream.requests).toHaveLength(0);
  });

  it('refuses an argument the tool does not declare, naming it, as any invalid argument, with nothing sent', async () => {
    // A misspelled limit would otherwise be dropped, and the list come back with its default length.
    const misspelled = await call(alice, 'list_pets', { status: 'SOLD', lmit: 1 });
    expect(misspelled.isError).toBe(true);
    expect(textOf(misspelled)).toContain('lmit');
    const extra = await call(alice, 'create_pet', { name: 'Kit', categoryId: '1', colour: 'grey' });
    expect(extra.isError).toBe(true);
    expect(textOf(extra)).toContain('colour');
    expect(upstream.requests).toHaveLength(0);
    // What tools/list says of every tool: no other arguments.
    const { tools } = await alice.listTools();
    for (const tool of tools)
      expect(tool.inputSchema, tool.name).toMatchObject({ additionalProperties: false });
  });

  it('creates a pet with one upstream call, its int64 category exact', async () => {
    const result = await call(alice, 'create_pet', { name: 'Kit', categoryId: MAX_INT64, status: 'PENDING' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      createPet: { name: 'Kit', categoryId: MAX_INT64, status: 'PENDING' },
    });
    expect(upstream.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /v1/pets',
    ]);
  });

  it('runs a read-only query through the gateway, and refuses a mutation and a subscription', async () => {
    const read = await call(alice, 'run_query', { query: '{ pets(status: SOLD) { id name } }' });
    expect(read.structuredContent).toEqual({ pets: [{ id: '2', name: 'Tom' }] });
    for (const query of [
      'mutation { createPet(input: { name: "X", categoryId: "1" }) { id } }',
      'subscription { pets { id } }',
    ]) {
      const refused = await call(alice, 'run_query', { query });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/read-only/);
    }
    expect(upstream.requests.filter((request) => request.method === 'POST')).toHaveLength(0);
  });

  it('holds run_query to the cost limit, as any GraphQL request', async () => {
    const fields = 'id name categoryId status';
    const query = `{ a: pets(limit: 100) { ${fields} } b: pets(limit: 100) { ${fields} } c: pets(limit: 100) { ${fields} } }`;
    const result = await call(alice, 'run_query', { query });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('COST_LIMIT_EXCEEDED');
    expect(upstream.requests).toHaveLength(0);
  });

  it('writes a log line and counts each tool call, by tool, outcome and the client name from initialize', async () => {
    await call(alice, 'list_pets', { status: 'SOLD' });
    await call(alice, 'create_pet', { name: '', categoryId: '1' });
    const calls = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'mcp tool call');
    expect(calls).toEqual([
      expect.objectContaining({
        tool: 'list_pets',
        outcome: 'ok',
        client: 'claude-desktop',
        durationMs: expect.any(Number),
      }),
      expect.objectContaining({
        tool: 'create_pet',
        outcome: 'error',
        codes: ['BAD_USER_INPUT'],
        client: 'claude-desktop',
      }),
    ]);
    expect(lines.join('\n')).not.toContain(ALICE);
    const exposition = await metrics.registry.metrics();
    expect(exposition).toMatch(
      /pet_gateway_mcp_tool_calls_total\{tool="list_pets",outcome="ok",client="claude-desktop"\} \d+/,
    );
    expect(exposition).toContain('pet_gateway_mcp_tool_call_duration_seconds_bucket');
  });
});
