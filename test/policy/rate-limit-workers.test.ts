// @tier slow: npm start with WORKERS=2

import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

// The limit a setting names is the limit a key meets, whatever WORKERS is (#44 item 1): with
// WORKERS=2 each request below goes out on a connection of its own, which the primary hands to the
// next worker in turn, so per-worker counts would let through twice the setting.

let gateway: StartedGateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

/** One `pets` operation on a connection of its own. */
function send(origin: string, authorization: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}/graphql`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ query: '{ pets(limit: 1) { id } }' }));
  });
}

describe('the rate limit and the cost budget with WORKERS=2', { timeout: 60_000 }, () => {
  it('RATE_LIMIT_PER_MINUTE=5: the sixth request with one key is 429, across workers', async () => {
    gateway = await npmStart({ WORKERS: '2', RATE_LIMIT_PER_MINUTE: '5', LOG_LEVEL: 'silent' });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await send(gateway.origin, `Bearer ${gateway.key}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });

  it('COST_BUDGET_PER_MINUTE=10: one key spends one budget across workers', async () => {
    gateway = await npmStart({ WORKERS: '2', COST_BUDGET_PER_MINUTE: '10', LOG_LEVEL: 'silent' });
    const answers: Array<{ status: number; body: string }> = [];
    for (let i = 0; i < 7; i++) answers.push(await send(gateway.origin, `Bearer ${gateway.key}`));
    // `pets(limit: 1) { id }` costs 2 (a pet and its id): five fit in 10 points, whichever worker answers.
    expect(answers.map(({ status }) => status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const last = JSON.parse((answers[4] as { body: string }).body) as {
      extensions?: { cost?: { throttleStatus?: { currentlyAvailable: number } } };
    };
    expect(last.extensions?.cost?.throttleStatus?.currentlyAvailable).toBe(0);
  });

  it('RATE_LIMIT_REFUSED_KEYS_PER_MINUTE=3: the fourth new refused key from one address is refused first, across workers', async () => {
    gateway = await npmStart({
      WORKERS: '2',
      RATE_LIMIT_PER_MINUTE: '100',
      RATE_LIMIT_REFUSED_KEYS_PER_MINUTE: '3',
      LOG_LEVEL: 'silent',
    });
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await send(gateway.origin, `Bearer not-a-key-${i}`));
    expect(answers.map((answer) => answer.body.includes('REFUSED_KEYS_LIMITED'))).toEqual([
      false,
      false,
      false,
      true,
      true,
    ]);
  });

  it('says in its start-up line that the count is shared by the workers', async () => {
    gateway = await npmStart({ WORKERS: '2', RATE_LIMIT_PER_MINUTE: '5', LOG_LEVEL: 'silent' });
    // Printed after the key's line, which npmStart waits for: this line is waited for in turn.
    const [, line] = await gateway.waitFor(/^(pet-gateway: rate limit .*)\n/m);
    expect(line).toBe(
      'pet-gateway: rate limit 5 requests per API key per minute (memory, counted across the 2 workers)',
    );
  });
});
