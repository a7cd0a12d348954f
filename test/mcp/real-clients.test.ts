// @tier ci: three real MCP clients against npm start, mcp-remote as a child process (about 10 s)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { spawnWatched } from '../support/process.ts';
import { call, connectMcp, connectMcp2026 } from './client.ts';

// What an analyst meets: `npm start`, then an assistant on each revision lists the pets and creates
// one. The 2026-07-28 client is asked first and says yes; the 2025-11-25 ones are not asked by the
// gateway (their host asks, by the tool's annotations).

const KEY = 'real-clients-key-0123456789';
const MCP_REMOTE = fileURLToPath(new URL('../../node_modules/mcp-remote/dist/proxy.js', import.meta.url));

let gateway: StartedGateway;
// mcp-remote keeps its state under $HOME/.mcp-auth: a home of its own, gone afterwards.
const home = mkdtempSync(join(tmpdir(), 'mcp-remote-home-'));
beforeAll(async () => {
  gateway = await npmStart({ PETSTORE_API_KEY: KEY, LOG_LEVEL: 'warn' });
}, 30_000);
afterAll(async () => {
  await gateway?.stop();
  rmSync(home, { recursive: true, force: true });
});

type Pets = { pets: { name: string }[] };
type Created = { createPet: { id: string; name: string } };

describe('real MCP clients against npm start', () => {
  it("the SDK's 1.x client (2025-11-25) lists pets and creates one", async () => {
    const client = await connectMcp(gateway.origin, KEY, 'sdk-1');
    try {
      const listed = await call(client, 'list_pets', { limit: 3 });
      expect((listed.structuredContent as Pets).pets).toHaveLength(3);
      const created = await call(client, 'create_pet', { name: 'Sdk One', categoryId: '1' });
      expect((created.structuredContent as Created).createPet.name).toBe('Sdk One');
    } finally {
      await client.close();
    }
  });

  it("the SDK's 2.x client (2026-07-28) lists pets, and creates one once its user confirms", async () => {
    const asked: string[] = [];
    const client = await connectMcp2026(gateway.origin, KEY, (message) => {
      asked.push(message);
      return 'accept';
    });
    try {
      const listed = await client.callTool({ name: 'list_pets', arguments: { limit: 3 } });
      expect((listed.structuredContent as Pets).pets).toHaveLength(3);
      const created = await client.callTool({
        name: 'create_pet',
        arguments: { name: 'Sdk Two', categoryId: '1' },
      });
      expect(asked).toEqual([expect.stringMatching(/Sdk Two/)]);
      expect((created.structuredContent as Created).createPet.name).toBe('Sdk Two');
      const after = await client.callTool({ name: 'list_pets', arguments: { limit: 100 } });
      expect((after.structuredContent as Pets).pets.map((pet) => pet.name)).toContain('Sdk Two');
    } finally {
      await client.close();
    }
  });

  it('mcp-remote, as Claude Desktop starts it, lists pets and creates one over stdio', async () => {
    const remote = spawnWatched(
      process.execPath,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote expands ${PET_KEY}, as Claude Desktop's config has it
      [MCP_REMOTE, `${gateway.origin}/mcp`, '--header', 'Authorization:${PET_KEY}', '--allow-http'],
      { env: { PET_KEY: `Bearer ${KEY}`, HOME: home }, stdio: ['pipe', 'pipe', 'pipe'], name: 'mcp-remote' },
    );
    const send = (message: Record<string, unknown>) =>
      remote.child.stdin?.write(`${JSON.stringify(message)}\n`);
    const answer = async (id: number) =>
      JSON.parse((await remote.waitFor(new RegExp(`^\\{.*"id":${id}\\b.*\\}$`, 'm'), 20_000))[0]);
    try {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'claude-ai', version: '1' },
        },
      });
      expect((await answer(1)).result.protocolVersion).toBe('2025-11-25');
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_pets', arguments: { limit: 2 } },
      });
      expect((await answer(2)).result.structuredContent.pets).toHaveLength(2);
      const create = { name: 'create_pet', arguments: { name: 'Remote', categoryId: '2' } };
      send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: create });
      expect((await answer(3)).result.structuredContent.createPet.name).toBe('Remote');
    } finally {
      await remote.stop('SIGTERM', 5_000);
    }
  }, 40_000);
});
