// @tier ci: pandas (python3-pandas, which .ci/run installs) reads a CSV endpoint of npm start as a table

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { spawnWatched } from '../support/process.ts';

// An analyst's script, as analysts write it: pandas.read_csv on the URL, the key as a header.

const KEY = 'pandas-key-0123456789';
let gateway: StartedGateway;

beforeAll(async () => {
  gateway = await npmStart({
    PETSTORE_API_KEY: KEY,
    PERSISTED_OPERATIONS: 'allow',
    PERSISTED_OPERATIONS_FILE: 'test/generated/persisted-documents.json',
    LOG_LEVEL: 'warn',
  });
}, 30_000);
afterAll(async () => {
  await gateway?.stop();
});

const SCRIPT = `
import json, sys
import pandas as pd
url, key = sys.argv[1], sys.argv[2]
table = pd.read_csv(url, storage_options={"Authorization": "Bearer " + key}, dtype={"id": str, "categoryId": str})
print(json.dumps({"columns": list(table.columns), "rows": table.astype(str).values.tolist()}))
`;

describe('a CSV endpoint read by pandas', () => {
  it('is the same table as the JSON answer: its columns, its rows, ids exact', async () => {
    const path = '/rest/ListPets?status=AVAILABLE&limit=10';
    const json = await (
      await fetch(new URL(path, gateway.origin), { headers: { authorization: `Bearer ${KEY}` } })
    ).json();
    const pets = json.data.pets as Record<string, string>[];
    expect(pets.length).toBeGreaterThan(0);
    // Debian's python, where python3-pandas installs (another python3 may come first on PATH).
    const python = spawnWatched(
      '/usr/bin/python3',
      ['-c', SCRIPT, `${gateway.origin}${path}&format=csv`, KEY],
      {
        name: 'pandas',
      },
    );
    const code = await python.exited;
    expect(code, python.output()).toBe(0);
    const table = JSON.parse(python.output().trim().split('\n').at(-1) ?? '{}');
    expect(table.columns).toEqual(['categoryId', 'id', 'name', 'status']);
    expect(table.rows).toEqual(pets.map((pet) => [pet.categoryId, pet.id, pet.name, pet.status]));
  }, 60_000);
});
