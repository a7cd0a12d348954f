// @tier unit

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * src/'s layers, top first: a module may import its own layer and those below it, never one above.
 * The data's path reads down this list (HTTP in → a lane → execution → schema → upstream → REST);
 * docs/architecture.md draws the same order.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['src/main.ts', 'src/process/', 'src/gateway.ts'],
  ['src/edge/'],
  // The two lanes side by side: neither imports the other; what both do is in src/policy/. MCP
  // sits beside them: its tool calls reach Yoga only through the `fetch` the edge hands it.
  ['src/fast-lane/', 'src/yoga/', 'src/mcp/', 'src/rest/'],
  ['src/policy/'],
  ['src/execution/'],
  ['src/schema/'],
  ['src/live/'],
  ['src/observability/'],
  ['src/upstream/'],
  ['src/stores/'],
  ['src/contract/'],
  // The settings, and the error codes with their statuses: read by every layer, importing none.
  ['src/config.ts', 'src/config/', 'src/codes.ts'],
];

/** The reference service stands apart: it shares the contract's rules with the gateway, nothing else. */
const APART = 'src/petstore/';

function layerOf(file: string): number {
  const index = LAYERS.findIndex((layer) => layer.some((place) => file === place || file.startsWith(place)));
  if (index === -1) throw new Error(`${file} is in no layer: add it to LAYERS (and to docs/architecture.md)`);
  return index;
}

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

function relativeImports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.\.?\/[^']+)'/g)].map(
    (match) => match[1] ?? '',
  );
  return specifiers.map((specifier) =>
    normalize(join(dirname(file), specifier))
      .split('\\')
      .join('/'),
  );
}

describe('src/ layers', () => {
  const files = sources('src');

  it('reads a layered tree (the check below has files to check)', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((file) => !file.startsWith(APART)).map(layerOf)).toContain(LAYERS.length - 1);
  });

  it('imports only downward', () => {
    const upward: string[] = [];
    for (const file of files.filter((name) => !name.startsWith(APART))) {
      for (const target of relativeImports(file)) {
        if (target.startsWith(APART)) {
          // Only the process layer starts the reference service (npm start with no upstream).
          if (layerOf(file) !== 0) upward.push(`${file} → ${target}`);
        } else if (layerOf(target) < layerOf(file)) upward.push(`${file} → ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keeps the lanes apart: the fast lane, Yoga and MCP share only what lies below them', () => {
    const lanes = ['src/fast-lane/', 'src/yoga/', 'src/mcp/', 'src/rest/'];
    const laneOf = (file: string) => lanes.find((lane) => file.startsWith(lane));
    const crossing = files.flatMap((file) => {
      const own = laneOf(file);
      if (own === undefined) return [];
      return relativeImports(file)
        .filter((target) => laneOf(target) !== undefined && laneOf(target) !== own)
        .map((target) => `${file} → ${target}`);
    });
    expect(files.some((file) => file.startsWith('src/fast-lane/'))).toBe(true);
    expect(crossing).toEqual([]);
  });

  it('keeps the reference service apart: it imports only itself and src/contract/', () => {
    const outside = files
      .filter((file) => file.startsWith(APART))
      .flatMap((file) => relativeImports(file).map((target) => `${file} → ${target}`))
      .filter((edge) => {
        const target = edge.split(' → ')[1] ?? '';
        return !target.startsWith(APART) && !target.startsWith('src/contract/');
      });
    expect(outside).toEqual([]);
  });
});
