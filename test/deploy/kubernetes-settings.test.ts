// @tier slow: kubectl renders the base and every overlay

import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { documentedSecret, gateway, portNumber, RENDERED, ROOT, read, secretValues } from './rendered.ts';

// The settings each rendering gives the gateway: only variables the configuration reads, values it
// loads, and the secrets from a Secret, never the ConfigMap.

/**
 * The variables the configuration reads (src/config.ts and the readers in src/config/): each is
 * read as `reader(env, 'NAME', …)`.
 */
const CONFIG_SOURCES = [
  'src/config.ts',
  ...readdirSync(new URL('src/config/', ROOT)).map((name) => `src/config/${name}`),
];
const CONFIG_READS = new Set(
  CONFIG_SOURCES.flatMap((file) =>
    [...read(file).matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((match) => match[1] as string),
  ),
);
function unreadSettings(names: string[]): string[] {
  return names.filter((name) => !CONFIG_READS.has(name));
}

describe.each(RENDERED)('deploy/kubernetes/%s', (_name, objects) => {
  it('sets only settings src/config.ts reads, with values it loads: one worker on 0.0.0.0', () => {
    const { container, settings, secretRefs } = gateway(objects);
    expect(unreadSettings([...Object.keys(settings), ...secretRefs.map((ref) => ref.env)])).toEqual([]);
    const config = loadConfig({ ...settings, ...secretValues(objects, secretRefs) });
    expect(config.host).toBe('0.0.0.0');
    expect(config.port).toBe(portNumber(container, 'http'));
    expect(config.workers).toBe(1);
    // Without it the embedded reference service would write data/petstore.db on a read-only root.
    expect(config.upstreamUrl).toBeDefined();
    expect(settings.PETSTORE_DB).toBeUndefined();
    // The ingress in front: its X-Forwarded-For is read, and no one else's.
    expect(config.trustedProxies.length).toBeGreaterThan(0);
    expect(config.trustedProxies.filter((entry) => /\/0$/.test(entry))).toEqual([]);
  });

  it('the Redis URL and the caller-key secret come from a Secret, never the ConfigMap', () => {
    const { settings, secretRefs } = gateway(objects);
    expect(secretRefs.map((ref) => ref.env).sort()).toEqual(['REDIS_KEY_SECRET', 'REDIS_URL']);
    expect(Object.keys(settings)).not.toContain('REDIS_URL');
    expect(Object.keys(settings)).not.toContain('REDIS_KEY_SECRET');
    // Where the rendering holds no Secret, docs/kubernetes.md creates it, with these keys.
    if (!objects.some((object) => object.kind === 'Secret')) {
      const documented = documentedSecret();
      for (const ref of secretRefs) {
        expect(ref.name).toBe(documented.name);
        expect(Object.keys(documented.values)).toContain(ref.key);
      }
    }
  });
});

describe('the checks themselves', () => {
  it('a misspelt setting is one src/config.ts does not read', () => {
    expect(CONFIG_READS.size).toBeGreaterThan(30);
    expect(unreadSettings(['UPSTREAM_URL', 'UPSTREAM_ULR', 'TRUSTED_PROXY'])).toEqual([
      'UPSTREAM_ULR',
      'TRUSTED_PROXY',
    ]);
  });
});
