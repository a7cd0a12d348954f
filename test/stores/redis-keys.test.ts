// @tier slow: three npm start processes on one Redis

import { createHash, createHmac } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';

// REDIS_KEY_SECRET end to end: three gateways started as `npm start` starts them, on one real Redis,
// with a rate limit of 2 per minute there. A and B share a secret, C has another. Each embeds its
// own reference store accepting the same key, so every request is a caller the upstream knows.
const KEY = 'shared-dev-key-of-the-redis-keys-test';
const SECRET = 'a-secret-instances-a-and-b-share-0123';
const OTHER_SECRET = 'a-secret-only-instance-c-has-456789ab';

describe.skipIf(!haveRedisServer('redis-keys.test'))('REDIS_KEY_SECRET across instances', () => {
  let redis: RunningRedis;
  const gateways: StartedGateway[] = [];

  const start = (secret: string) =>
    npmStart({
      PETSTORE_API_KEY: KEY,
      RATE_LIMIT_PER_MINUTE: '2',
      RATE_LIMIT_STORE: 'redis',
      REDIS_URL: redis.url,
      REDIS_KEY_SECRET: secret,
    });

  /** The status of one `pets` request through `gateway`. */
  const status = async (gateway: StartedGateway) => {
    const response = await fetch(`${gateway.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ query: '{ pets(limit: 1) { id } }' }),
    });
    await response.arrayBuffer();
    return response.status;
  };

  beforeAll(async () => {
    redis = await startRedis();
    gateways.push(...(await Promise.all([start(SECRET), start(SECRET), start(OTHER_SECRET)])));
    // Each connects to Redis in the background: wait until all three answer /health with it up.
    for (const gateway of gateways) {
      for (let i = 0; ; i++) {
        const health = await (await fetch(`${gateway.origin}/health`)).text();
        if (health.includes('"redis":"up"')) break;
        if (i > 200) throw new Error(`Redis never up for ${gateway.origin}: ${health}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await redis?.stop();
  });

  it('the same secret shares one count, another secret counts apart, and no key is a bare SHA-256', async () => {
    const [a, b, c] = gateways as [StartedGateway, StartedGateway, StartedGateway];
    expect([await status(a), await status(b), await status(a)]).toEqual([200, 200, 429]);
    expect([await status(c), await status(c), await status(c)]).toEqual([200, 200, 429]);

    const inspect = createClient({ url: redis.url, socket: { reconnectStrategy: false } });
    inspect.on('error', () => {});
    await inspect.connect();
    try {
      const hmac = (secret: string) => createHmac('sha256', secret).update(`Bearer ${KEY}`).digest('hex');
      expect((await inspect.keys('*')).sort()).toEqual(
        [`pg:rl:v2:${hmac(SECRET)}`, `pg:rl:v2:${hmac(OTHER_SECRET)}`].sort(),
      );
      const sha256 = createHash('sha256').update(`Bearer ${KEY}`).digest('hex');
      expect(await inspect.keys(`*${sha256}*`)).toEqual([]);
    } finally {
      inspect.destroy();
    }
  });
});
