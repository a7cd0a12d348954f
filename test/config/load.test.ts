// @tier unit

import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env-values.ts';
import { loadConfig } from '../../src/config.ts';

/** A REDIS_KEY_SECRET long enough (32 characters). */
const SECRET = '0123456789abcdef0123456789abcdef';

describe('loadConfig', () => {
  it('has working defaults: no upstream means the embedded reference service', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      upstreamUrl: undefined,
      upstreamTimeoutMs: 5000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('listens on loopback with the embedded service (its key is in GraphiQL), on every interface with an upstream', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ UPSTREAM_URL: 'https://api.example.com/v1' }).host).toBe('0.0.0.0');
    expect(loadConfig({ UPSTREAM_URL: 'https://api.example.com/v1', HOST: '127.0.0.1' }).host).toBe(
      '127.0.0.1',
    );
  });

  it('accepts the contract production and staging shapes, trailing slash or not', () => {
    expect(loadConfig({ UPSTREAM_URL: 'https://api.example.com/v1/' }).upstreamUrl?.href).toBe(
      'https://api.example.com/v1',
    );
    expect(loadConfig({ UPSTREAM_URL: 'http://127.0.0.1:8080/staging/v1' }).upstreamUrl?.pathname).toBe(
      '/staging/v1',
    );
  });

  it('reads CORS_ORIGINS as a list of origins, * by default', () => {
    expect(loadConfig({}).corsOrigins).toEqual(['*']);
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000' }).corsOrigins).toEqual([
      'https://a.example',
      'http://localhost:3000',
    ]);
    // Copied from an address bar: a trailing slash (and upper case) is the origin it means.
    expect(
      loadConfig({ CORS_ORIGINS: 'https://app.example/, HTTPS://Admin.Example:8443/' }).corsOrigins,
    ).toEqual(['https://app.example', 'https://admin.example:8443']);
    // `null` (sandboxed iframes, data: and file: pages) only when an operator lists it.
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example,null' }).corsOrigins).toEqual([
      'https://a.example',
      'null',
    ]);
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT must be an integer from 0 to 65535, got "abc"$/],
    [{ PORT: '70000' }, /^PORT/],
    [{ UPSTREAM_TIMEOUT_MS: '0' }, /^UPSTREAM_TIMEOUT_MS must be an integer from 1/],
    [{ UPSTREAM_TIMEOUT_MS: '1.5' }, /^UPSTREAM_TIMEOUT_MS/],
    [{ UPSTREAM_CONNECTIONS: '-1' }, /^UPSTREAM_CONNECTIONS/],
    [{ UPSTREAM_URL: 'not a url' }, /^UPSTREAM_URL must be an absolute http\(s\) URL/],
    [{ UPSTREAM_URL: 'ftp://host/v1' }, /^UPSTREAM_URL must use http or https/],
    [{ UPSTREAM_URL: 'https://host/v2' }, /^UPSTREAM_URL path must end in \/v1/],
    [{ UPSTREAM_URL: 'https://user:pw@host/v1' }, /^UPSTREAM_URL must not carry credentials/],
    [
      { CORS_ORIGINS: 'https://a.example/path' },
      /^CORS_ORIGINS: "https:\/\/a.example\/path" has a path \(\/path\); an origin is scheme:\/\/host\[:port\], here https:\/\/a.example$/,
    ],
    [{ CORS_ORIGINS: 'https://a.example/?x=1' }, /^CORS_ORIGINS: "https:\/\/a.example\/\?x=1" has a query/],
    [{ CORS_ORIGINS: 'a.example' }, /^CORS_ORIGINS/],
  ])('refuses %o with a one-line message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrowError(ConfigError);
    expect(() => loadConfig(env)).toThrowError(message);
  });
});

describe('federation configuration', () => {
  it('is off by default, with 100 representations per _entities when on', () => {
    expect(loadConfig({})).toMatchObject({ federation: false, limits: { maxRepresentations: 100 } });
    expect(loadConfig({ FEDERATION: 'on', MAX_REPRESENTATIONS: '500' })).toMatchObject({
      federation: true,
      limits: { maxRepresentations: 500 },
    });
  });

  it.each([
    [{ FEDERATION: 'v2' }, /^FEDERATION must be on or off \(or yes\/no, true\/false, 1\/0\), got "v2"$/],
    [{ MAX_REPRESENTATIONS: '0' }, /^MAX_REPRESENTATIONS must be an integer from 1 to 100000, got "0"$/],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrowError(message);
  });
});

describe('MCP configuration', () => {
  it('is on by default; MCP=off removes the /mcp endpoint; anything else is refused naming the variable', () => {
    expect(loadConfig({}).mcp).toBe(true);
    expect(loadConfig({ MCP: 'off' }).mcp).toBe(false);
    expect(loadConfig({ MCP: 'on' }).mcp).toBe(true);
    expect(() => loadConfig({ MCP: 'stateful' })).toThrowError(/^MCP must be on or off .*got "stateful"$/);
  });
});

describe('response cache configuration', () => {
  it('is off by default, and REDIS_URL alone does not turn it on', () => {
    expect(loadConfig({})).toMatchObject({
      responseCache: 'off',
      responseCacheTtlMs: 2000,
      redisUrl: undefined,
    });
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379' })).toMatchObject({ responseCache: 'off' });
  });

  it('takes memory, or redis with a redis:// or rediss:// REDIS_URL', () => {
    expect(loadConfig({ RESPONSE_CACHE: 'memory', RESPONSE_CACHE_TTL_MS: '500' })).toMatchObject({
      responseCache: 'memory',
      responseCacheTtlMs: 500,
    });
    // The memory cache's bound in bytes (#39 item 1): 64 MiB unless told.
    expect(loadConfig({}).responseCacheMaxBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ RESPONSE_CACHE_MAX_BYTES: '1048576' }).responseCacheMaxBytes).toBe(1048576);
    const redis = loadConfig({
      RESPONSE_CACHE: 'redis',
      REDIS_URL: 'rediss://:pw@cache.internal:6380/0',
      REDIS_KEY_SECRET: SECRET,
    });
    expect(redis.responseCache).toBe('redis');
    expect(redis.redisUrl?.host).toBe('cache.internal:6380');
    expect(redis.redisKeySecret).toBe(SECRET);
  });

  it('refuses callers’ keys in Redis without REDIS_KEY_SECRET: each instance would key them its own way', () => {
    for (const env of [
      { RESPONSE_CACHE: 'redis', REDIS_URL: 'redis://cache:6379' },
      { RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://cache:6379' },
    ]) {
      expect(() => loadConfig(env)).toThrowError(ConfigError);
      expect(() => loadConfig(env)).toThrowError(
        /^(RESPONSE_CACHE|RATE_LIMIT_STORE)=redis needs REDIS_KEY_SECRET, the same on every instance sharing the Redis/,
      );
    }
    // APQ keys documents by their own hash, not by caller: no secret needed.
    expect(
      loadConfig({ APQ_STORE: 'redis', REDIS_URL: 'redis://cache:6379' }).redisKeySecret,
    ).toBeUndefined();
    // Too short to be a secret; the value is never echoed.
    const short = { RESPONSE_CACHE: 'redis', REDIS_URL: 'redis://cache:6379', REDIS_KEY_SECRET: 'hunter2' };
    expect(() => loadConfig(short)).toThrowError(/^REDIS_KEY_SECRET must be at least 32 characters/);
    expect(() => loadConfig(short)).not.toThrowError(/hunter2/);
    // Memory stores key by this process's own random secret: nothing to share.
    expect(loadConfig({ RESPONSE_CACHE: 'memory' }).redisKeySecret).toBeUndefined();
  });

  it('takes MCP_STATE_SECRET at 32 characters and refuses a shorter one without echoing it', () => {
    expect(loadConfig({}).mcpStateSecret).toBeUndefined();
    expect(loadConfig({ MCP_STATE_SECRET: 'x'.repeat(32) }).mcpStateSecret).toBe('x'.repeat(32));
    const short = { MCP_STATE_SECRET: 'y'.repeat(31) };
    expect(() => loadConfig(short)).toThrowError(/^MCP_STATE_SECRET must be at least 32 characters/);
    expect(() => loadConfig(short)).not.toThrowError(/yyyy/);
  });

  it.each([
    [{ RESPONSE_CACHE: 'disk' }, /^RESPONSE_CACHE must be off, memory or redis/],
    [{ LOG_FORMAT: 'xml' }, /^LOG_FORMAT must be auto, json or pretty, got "xml"$/],
    [
      { PERSISTED_OPERATIONS: 'always' },
      /^PERSISTED_OPERATIONS must be off, allow or require, got "always"$/,
    ],
    [{ RESPONSE_CACHE_TTL_MS: '0' }, /^RESPONSE_CACHE_TTL_MS must be an integer from 1 to 60000/],
    [{ RESPONSE_CACHE_TTL_MS: '60001' }, /^RESPONSE_CACHE_TTL_MS/],
    [
      { RESPONSE_CACHE_MAX_BYTES: '1048575' },
      /^RESPONSE_CACHE_MAX_BYTES must be an integer from 1048576 to 4294967296/,
    ],
    [{ RESPONSE_CACHE_MAX_BYTES: '4294967297' }, /^RESPONSE_CACHE_MAX_BYTES/],
    [{ RESPONSE_CACHE: 'redis' }, /^RESPONSE_CACHE=redis needs REDIS_URL/],
    [
      { RESPONSE_CACHE: 'redis', REDIS_URL: 'http://cache:6379' },
      /^REDIS_URL must be a redis:\/\/ or rediss:\/\//,
    ],
    [{ RESPONSE_CACHE: 'redis', REDIS_URL: 'secret password' }, /^REDIS_URL must be an absolute/],
  ])('refuses %o with a one-line message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrowError(ConfigError);
    expect(() => loadConfig(env)).toThrowError(message);
  });

  it('never echoes a REDIS_URL, which may hold a password', () => {
    expect(() => loadConfig({ RESPONSE_CACHE: 'redis', REDIS_URL: 'hunter2' })).not.toThrowError(/hunter2/);
  });
});

describe('upstream coalescing configuration', () => {
  it('is on by default and turned off with UPSTREAM_COALESCE=off', () => {
    expect(loadConfig({}).upstreamCoalesce).toBe(true);
    expect(loadConfig({ UPSTREAM_COALESCE: 'off' }).upstreamCoalesce).toBe(false);
    expect(() => loadConfig({ UPSTREAM_COALESCE: 'sometimes' })).toThrowError(
      /^UPSTREAM_COALESCE must be on or off \(or yes\/no, true\/false, 1\/0\), got "sometimes"$/,
    );
  });
});

describe('TRUSTED_PROXIES', () => {
  it('is empty by default, and takes addresses and CIDR ranges, IPv4 and IPv6', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: ' 10.0.0.0/8, 192.168.1.10 ,fd00::/8,::1' }).trustedProxies).toEqual(
      ['10.0.0.0/8', '192.168.1.10', 'fd00::/8', '::1'],
    );
  });

  it.each([
    ['nginx', /^TRUSTED_PROXIES: "nginx" is not an IP address or a CIDR range/],
    ['10.0.0.0/33', /^TRUSTED_PROXIES: "10.0.0.0\/33": an IPv4 prefix is at most \/32$/],
    ['10.0.0.0/8/1', /is not an IP address or a CIDR range/],
    ['10.0.0.0/x', /is not an IP address or a CIDR range/],
  ])('refuses %s naming the entry', (value, message) => {
    expect(() => loadConfig({ TRUSTED_PROXIES: value })).toThrowError(message);
  });
});

describe('rate limit configuration', () => {
  it('is off by default; RATE_LIMIT_PER_MINUTE turns it on in memory, or in Redis with REDIS_URL', () => {
    expect(loadConfig({}).rateLimit).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_STORE: 'redis' })).toMatchObject({
      rateLimit: undefined,
      redisUrl: undefined,
    });
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '120' }).rateLimit).toEqual({
      perMinute: 120,
      store: 'memory',
      refusedKeysPerMinute: 60,
    });
    expect(
      loadConfig({ RATE_LIMIT_PER_MINUTE: '120', RATE_LIMIT_REFUSED_KEYS_PER_MINUTE: '10' }).rateLimit
        ?.refusedKeysPerMinute,
    ).toBe(10);
    // Renamed when its meaning changed: the old name is refused, not silently ignored.
    expect(() =>
      loadConfig({ RATE_LIMIT_PER_MINUTE: '120', RATE_LIMIT_NEW_KEYS_PER_MINUTE: '10' }),
    ).toThrowError(/^RATE_LIMIT_NEW_KEYS_PER_MINUTE is now RATE_LIMIT_REFUSED_KEYS_PER_MINUTE/);
    const shared = loadConfig({
      RATE_LIMIT_PER_MINUTE: '60',
      RATE_LIMIT_STORE: 'redis',
      REDIS_URL: 'redis://limits:6379',
      REDIS_KEY_SECRET: SECRET,
    });
    expect(shared).toMatchObject({ rateLimit: { perMinute: 60, store: 'redis' }, responseCache: 'off' });
    expect(shared.redisUrl?.host).toBe('limits:6379');
  });

  it.each([
    [{ RATE_LIMIT_PER_MINUTE: '0' }, /^RATE_LIMIT_PER_MINUTE must be an integer from 1 to 1000000, got "0"$/],
    [{ RATE_LIMIT_PER_MINUTE: 'lots' }, /^RATE_LIMIT_PER_MINUTE must be an integer/],
    [
      { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_REFUSED_KEYS_PER_MINUTE: '0' },
      /^RATE_LIMIT_REFUSED_KEYS_PER_MINUTE must be an integer from 1 to 1000000, got "0"$/,
    ],
    [
      { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_STORE: 'disk' },
      /^RATE_LIMIT_STORE must be memory or redis, got "disk"$/,
    ],
    [{ RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_STORE: 'redis' }, /^RATE_LIMIT_STORE=redis needs REDIS_URL/],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrowError(message);
  });
});

describe('workers configuration', () => {
  it('is 1 by default (no cluster), takes a count or auto (one per core)', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WORKERS: '4' }).workers).toBe(4);
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(availableParallelism());
    expect(loadConfig({ WORKERS: ' AUTO ' }).workers).toBe(availableParallelism());
  });

  it('refuses anything else with one line naming the variable', () => {
    for (const value of ['0', '-1', '2.5', 'all', '257']) {
      expect(() => loadConfig({ WORKERS: value })).toThrow(
        new ConfigError(`WORKERS must be auto or an integer from 1 to 256, got "${value}"`),
      );
    }
  });
});

describe('automatic persisted queries (APQ)', () => {
  const manifest = { PERSISTED_OPERATIONS_FILE: 'persisted-documents.json' };

  it('are on by default, in memory, 1000 documents and 1 MiB; APQ=off turns them off', () => {
    expect(loadConfig({}).apq).toEqual({ store: 'memory', maxDocuments: 1000, maxBytes: 1048576 });
    expect(loadConfig({ PERSISTED_OPERATIONS: 'allow', ...manifest }).apq?.store).toBe('memory');
    expect(loadConfig({ APQ: 'off' }).apq).toBeUndefined();
    expect(loadConfig({ APQ_MAX_DOCUMENTS: '1', APQ_MAX_BYTES: '1024' }).apq).toMatchObject({
      maxDocuments: 1,
      maxBytes: 1024,
    });
  });

  it('are shared through Redis only with APQ_STORE=redis, which needs REDIS_URL', () => {
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379' }).apq?.store).toBe('memory');
    const shared = loadConfig({ APQ_STORE: 'redis', REDIS_URL: 'redis://cache:6379' });
    expect(shared.apq?.store).toBe('redis');
    expect(shared.redisUrl?.host).toBe('cache:6379');
    expect(() => loadConfig({ APQ_STORE: 'redis' })).toThrowError(/^APQ_STORE=redis needs REDIS_URL/);
  });

  it('are off, and GraphiQL not served, with PERSISTED_OPERATIONS=require; asking for either is an error', () => {
    const required = loadConfig({ PERSISTED_OPERATIONS: 'require', ...manifest });
    expect(required.apq).toBeUndefined();
    expect(required.graphiql).toBe(false);
    expect(loadConfig({}).graphiql).toBe(true);
    expect(() => loadConfig({ PERSISTED_OPERATIONS: 'require', APQ: 'on', ...manifest })).toThrowError(
      /^APQ=on cannot be used with PERSISTED_OPERATIONS=require/,
    );
    expect(() => loadConfig({ PERSISTED_OPERATIONS: 'require', GRAPHIQL: 'on', ...manifest })).toThrowError(
      /^GRAPHIQL=on cannot serve anything with PERSISTED_OPERATIONS=require/,
    );
  });

  it.each([
    [{ APQ: 'maybe' }, /^APQ must be on or off \(or yes\/no, true\/false, 1\/0\), got "maybe"$/],
    [{ APQ_STORE: 'disk' }, /^APQ_STORE must be memory or redis, got "disk"$/],
    [{ APQ_MAX_DOCUMENTS: '0' }, /^APQ_MAX_DOCUMENTS must be an integer from 1 to 1000000/],
    [{ APQ_MAX_BYTES: '1023' }, /^APQ_MAX_BYTES must be an integer from 1024 to 1073741824/],
  ])('refuses %o with one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrowError(ConfigError);
    expect(() => loadConfig(env)).toThrowError(message);
  });
});

describe('on/off settings', () => {
  it('a refused value is told every spelling that is accepted, and each one it lists is', () => {
    const message = (() => {
      try {
        loadConfig({ GRAPHIQL: 'enabled' });
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    // The words the message offers, in on/off pairs: "on or off (or yes/no, true/false, 1/0)".
    const pairs = [...message.matchAll(/(\w+)(?: or |\/)(\w+)/g)].map((match) => [match[1], match[2]]);
    expect(pairs).toEqual([
      ['on', 'off'],
      ['yes', 'no'],
      ['true', 'false'],
      ['1', '0'],
    ]);
    for (const [on, off] of pairs) {
      expect(loadConfig({ GRAPHIQL: on }).graphiql, on).toBe(true);
      expect(loadConfig({ GRAPHIQL: off }).graphiql, off).toBe(false);
    }
    expect(message).toMatch(/^GRAPHIQL must be .*, got "enabled"$/);
  });
});

describe('LOG_FORMAT', () => {
  it('is auto by default (readable lines in a terminal, JSON into a pipe or file), and takes json or pretty', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(ConfigError);
  });
});

describe('live subscriptions', () => {
  it('are on by default, polled every 5 s, 10 per key and 2000 per instance, announced in memory', () => {
    expect(loadConfig({}).live).toEqual({
      pollMs: 5000,
      maxPerKey: 10,
      maxStreams: 2000,
      slowReaderMs: 30_000,
      store: 'memory',
    });
  });

  it('read LIVE, LIVE_POLL_MS, LIVE_MAX_PER_KEY, LIVE_MAX_STREAMS and LIVE_STORE', () => {
    expect(loadConfig({ LIVE: 'off' }).live).toBeUndefined();
    expect(
      loadConfig({ LIVE_POLL_MS: '1000', LIVE_MAX_PER_KEY: '1', LIVE_MAX_STREAMS: '50' }).live,
    ).toMatchObject({ pollMs: 1000, maxPerKey: 1, maxStreams: 50 });
  });

  it('refuses a poll under a second, a bad store, and LIVE_STORE=redis without Redis', () => {
    expect(() => loadConfig({ LIVE_POLL_MS: '999' })).toThrow(/LIVE_POLL_MS must be an integer from 1000/);
    expect(() => loadConfig({ LIVE_STORE: 'disk' })).toThrow(/LIVE_STORE must be memory or redis/);
    expect(() => loadConfig({ LIVE_STORE: 'redis' })).toThrow(/LIVE_STORE=redis needs REDIS_URL/);
    expect(() => loadConfig({ LIVE_STORE: 'redis', REDIS_URL: 'redis://r:6379' })).toThrow(
      /LIVE_STORE=redis needs REDIS_KEY_SECRET/,
    );
  });
});

describe('NAME_MAX_LENGTH', () => {
  it('is unset by default (the contract states no maximum), and takes a count of characters', () => {
    expect(loadConfig({}).limits.nameMaxLength).toBeUndefined();
    expect(loadConfig({ NAME_MAX_LENGTH: '' }).limits.nameMaxLength).toBeUndefined();
    expect(loadConfig({ NAME_MAX_LENGTH: '200' }).limits.nameMaxLength).toBe(200);
  });

  it.each(['0', '-1', '1.5', 'off', '2000000'])('refuses %s with one line naming the variable', (value) => {
    expect(() => loadConfig({ NAME_MAX_LENGTH: value })).toThrowError(
      new RegExp(`^NAME_MAX_LENGTH must be an integer from 1 to 1000000, got "${value}"$`),
    );
  });
});
