// @tier slow: Tailcall's own binary checks the config the bench gives it

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@graphql-hive/gateway-runtime';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../bench/hive-mesh.ts';
import { listedPets } from '../../bench/static-upstream.ts';
import { TAILCALL_LOG_ENV, tailcallBinary, tailcallConfig } from '../../bench/tailcall.ts';
import { WORKLOADS } from '../../bench/workloads.ts';

// The bench's peers as it sets them up, checked without load: Tailcall's config and Mesh's schema.

describe('the tailcall target', () => {
  it('has a config Tailcall 1.0.0 accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-tailcall-test-'));
    try {
      const file = join(dir, 'pets.graphql');
      writeFileSync(file, tailcallConfig(new URL('http://127.0.0.1:9/v1'), 8099));
      const check = spawnSync(tailcallBinary(), ['check', file], {
        encoding: 'utf8',
        env: { ...process.env, ...TAILCALL_LOG_ENV },
      });
      expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);

      // The same check fails on a config that is not Tailcall's: it is a real validation.
      writeFileSync(file, tailcallConfig(new URL('http://127.0.0.1:9/v1'), 8099).replace('@http(', '@htp('));
      expect(spawnSync(tailcallBinary(), ['check', file], { encoding: 'utf8' }).status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Tailcall answers ids as JSON numbers: exact ones pass, rounded ones are a wrong answer.
  it('accepts ids as exact JSON numbers and rejects them rounded, on list20-bigids', () => {
    const check = WORKLOADS.find((w) => w.name === 'list20-bigids')?.targets.tailcall?.check;
    const pets = listedPets('int64', 20);
    const answer = (id: (text: string) => string) =>
      `{"data":{"pets":[${pets
        .map(
          (p) =>
            `{"id":${id(p.id)},"name":"${p.name}","categoryId":${id(p.categoryId)},"status":"${p.status}"}`,
        )
        .join(',')}]}}`;
    expect(
      check?.(
        200,
        answer((id) => id),
      ),
    ).toBeUndefined();
    expect(
      check?.(
        200,
        answer((id) => String(Number(id))),
      ),
    ).toMatch(/ids differ/);
  });
});

describe('the hive-mesh target', () => {
  it('composes the contract into a schema that the list query, under Mesh names, validates against', async () => {
    const sdl = await composeSupergraph(new URL('http://127.0.0.1:9/v1'), new Logger({ level: false }));
    const schema = buildSchema(sdl, { assumeValidSDL: true });
    for (const workload of WORKLOADS.filter((w) => w.targets['hive-mesh'] !== undefined)) {
      const { query } = JSON.parse(workload.targets['hive-mesh']?.body as string) as { query: string };
      expect(validate(schema, parse(query)), `${workload.name}: ${query}`).toEqual([]);
      // The gateway's own query is not Mesh's: hive-mesh needs a spec of its own.
      const gateway = JSON.parse(workload.targets.gateway?.body as string) as { query: string };
      expect(validate(schema, parse(gateway.query))).not.toEqual([]);
    }
    // The caller's Authorization goes to the upstream on every operation.
    expect(sdl).toContain('headers: [["Authorization", "{context.headers.authorization}"]]');
  });
});
