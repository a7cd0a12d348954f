import { Pool } from 'undici';
import { sample } from './metrics-text.ts';
import { sleep } from './traffic.ts';

// What the cluster run asks of the instances it watches, beside the traffic: health, metrics, a
// GraphQL POST of its own, and waiting until one of these says what it waits for.

export async function get(pool: Pool, path: string): Promise<{ status: number; text: string }> {
  const { statusCode, body } = await pool.request({ path, method: 'GET' });
  return { status: statusCode, text: await body.text() };
}

export async function postGraphql(pool: Pool, authorization: string, query: string, forwardedFor: string) {
  const { statusCode, body } = await pool.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization, 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ query }),
  });
  await body.dump();
  return { status: statusCode };
}

/** Each instance's Redis state, as its /health says it. */
export async function redisStates(ports: number[]): Promise<Array<string | undefined>> {
  return Promise.all(
    ports.map(async (port) => {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`);
        return ((await response.json()) as { redis?: string }).redis;
      } catch {
        return undefined;
      }
    }),
  );
}

export async function waitUntil(
  what: string,
  condition: () => Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
    if (await condition().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`chaos: never ${what} within ${timeoutMs / 1000} s`);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

/** One instance's /metrics text, on a connection of its own. */
export async function scrape(port: number): Promise<string> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  try {
    return (await get(pool, '/metrics')).text;
  } finally {
    await pool.close();
  }
}

/** Whether every instance's breaker is closed, from their /metrics texts. */
export const breakersClosed = (texts: string[]) =>
  texts.every((text) => sample(text, 'pet_gateway_upstream_breaker_state') === 0);
