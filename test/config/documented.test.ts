// @tier unit

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

// docs/configuration.md's table (and docs/limits.md's for the request limits) is what operators read:
// held here against what loadConfig reads, both ways, and against the defaults it applies.

const SECRET = '0123456789abcdef0123456789abcdef';

interface Row {
  names: string[];
  defaults: string[];
}

/** The rows of a docs page's tables whose first cell names variables in backticks. */
function rowsOf(page: string): Row[] {
  const text = readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => /^\| `[A-Z][A-Z0-9_]+`/.test(line))
    .map((line) => {
      const [names = '', defaults = ''] = line.split(' | ').map((cell) => cell.replace(/^\| /, ''));
      return {
        names: [...names.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1] ?? ''),
        // Each variable's default is the first backticked value of its comma-separated part.
        defaults: defaults.split(/,\s+(?![^(]*\))/).map((part) => /^`([^`]+)`/.exec(part)?.[1] ?? ''),
      };
    });
}

const documented = [...rowsOf('configuration.md'), ...rowsOf('limits.md')];
const documentedNames = new Set(documented.flatMap((row) => row.names));

/** The variables loadConfig reads from `env`, recorded as it asks for them. */
function readBy(env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  loadConfig(recording);
  return read;
}

describe('the settings the docs list are the settings the code reads', () => {
  it('every variable read is documented, and every documented one is read', () => {
    // Together these reach every branch that reads a variable: the stores, the rate limit, the manifest.
    const read = new Set([
      ...readBy({}),
      ...readBy({
        UPSTREAM_URL: 'http://127.0.0.1:1/v1',
        RESPONSE_CACHE: 'redis',
        RATE_LIMIT_PER_MINUTE: '10',
        RATE_LIMIT_STORE: 'redis',
        APQ_STORE: 'redis',
        LIVE_STORE: 'redis',
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_KEY_SECRET: SECRET,
      }),
      ...readBy({ PERSISTED_OPERATIONS: 'allow', PERSISTED_OPERATIONS_FILE: 'schema/persisted.json' }),
    ]);
    // A retired variable is read only to stop start-up with its successor's name.
    const retired = (name: string) => {
      try {
        loadConfig({ [name]: '1' });
        return false;
      } catch (error) {
        return /is now [A-Z_]+/.test((error as Error).message);
      }
    };
    expect([...read].filter((name) => !documentedNames.has(name) && !retired(name)).sort()).toEqual([]);
    expect([...documentedNames].filter((name) => !read.has(name)).sort()).toEqual([]);
  });

  it('each documented default is the one applied: setting it changes nothing', () => {
    const checked: string[] = [];
    for (const row of documented) {
      row.names.forEach((name, index) => {
        const value = row.defaults[index];
        // Defaults that depend on something else (the descriptor limit, the upstream) are worded, not a value.
        if (!value) return;
        expect({ name, config: loadConfig({ [name]: value }) }).toEqual({ name, config: loadConfig({}) });
        checked.push(name);
      });
    }
    expect(checked.length).toBeGreaterThan(30);
  });

  it('the rows of REDIS_URL and REDIS_KEY_SECRET name every setting that needs them', () => {
    const rowText = (name: string) =>
      readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
        .split('\n')
        .find((line) => line.startsWith(`| \`${name}\``)) ?? '';
    const needs = (env: Record<string, string>, what: string) =>
      [...documentedNames].filter((name) => {
        try {
          loadConfig({ RATE_LIMIT_PER_MINUTE: '10', ...env, [name]: 'redis' });
          return false;
        } catch (error) {
          return (error as Error).message.startsWith(`${name}=redis needs ${what}`);
        }
      });
    const needUrl = needs({}, 'REDIS_URL');
    const needSecret = needs({ REDIS_URL: 'redis://127.0.0.1:6379' }, 'REDIS_KEY_SECRET');
    expect(needUrl.length).toBeGreaterThan(2);
    for (const name of needUrl) expect(rowText('REDIS_URL')).toContain(`\`${name}=redis\``);
    for (const name of needSecret) expect(rowText('REDIS_KEY_SECRET')).toContain(`\`${name}=redis\``);
  });
});
