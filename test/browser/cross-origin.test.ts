// @tier slow: a real Chromium against npm start

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor } from '../support/chromium.ts';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

// A page on another origin, in real Chromium, against the embedded default (`npm start`), whose
// GraphiQL page holds that run's API key. The other origin is a server of the test's own on
// 127.0.0.1 (another port is another origin). Issue 27: with the page's CORS headers echoing any
// Origin, such a page fetched /graphql asking for text/html (a simple request: no preflight), read
// the key and listed pets with it.
const chromium = await chromiumFor('cross-origin.test');

let gateway: StartedGateway;
let other: Server;
let otherOrigin = '';
let browser: Browser | undefined;

beforeAll(async () => {
  if (!chromium.available) return;
  gateway = await npmStart();
  other = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>another origin</title><p>nothing here</p>');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  // One browser for both tests. The attacker's name is answered with 127.0.0.1, as a rebinding DNS
  // server would after the first visit: a page it fetches is then same-origin with the attacker's own.
  browser = await chromium.launch(['--host-resolver-rules=MAP rebind.example 127.0.0.1']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  other?.close();
});

/**
 * The page Chromium is served at `url`, as it arrived: the checks here are about what the gateway
 * sends to that origin, so the 9 MB GraphiQL page is not run (its scripts off), which would cost
 * seconds of CPU per load on a busy machine.
 */
async function served(url: string): Promise<{ status: number | undefined; html: string }> {
  const context = await (browser as Browser).newContext({ javaScriptEnabled: false });
  try {
    const response = await (await context.newPage()).goto(url, { waitUntil: 'commit' });
    return { status: response?.status(), html: (await response?.text()) ?? '' };
  } finally {
    await context.close();
  }
}

/** What a script on `page` could read of a fetch: the text, or the error that stopped it. */
interface Read {
  text?: string;
  error?: string;
}

describe.skipIf(!chromium.available)('the GraphiQL page from another origin, in Chromium', () => {
  it('a page on another origin cannot read the GraphiQL page (nor the key in it), though it may call GraphQL', async () => {
    const key = gateway.key as string;
    expect(key).toMatch(/^dev-/);
    const page = await (browser as Browser).newPage();
    try {
      await page.goto(`${otherOrigin}/`);
      expect(new URL(page.url()).origin).not.toBe(gateway.origin);
      const reads = await page.evaluate(async (endpoint): Promise<Record<string, Read>> => {
        const read = async (init: RequestInit): Promise<Read> => {
          try {
            return { text: await (await fetch(endpoint, init)).text() };
          } catch (error) {
            return { error: String(error) };
          }
        };
        return {
          // What Chromium sends when a person opens the URL, and the bare simple request.
          page: await read({
            headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
          }),
          html: await read({ headers: { accept: 'text/html' } }),
          // The control: the same page may call GraphQL (CORS_ORIGINS is * by default), so what
          // stops the reads above is the page's own protection, not a test that cannot read at all.
          graphql: await read({
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ __typename }' }),
          }),
        };
      }, `${gateway.origin}/graphql`);
      expect(reads.graphql?.text).toBe('{"data":{"__typename":"Query"}}');
      for (const name of ['page', 'html']) {
        expect(reads[name]?.text, name).toBeUndefined();
        expect(reads[name]?.error, name).toMatch(/Failed to fetch/);
      }
      expect(JSON.stringify(reads)).not.toContain(key);

      // Opened on its own origin, the page does hold the key: what the reads above were after.
      expect((await served(`${gateway.origin}/graphql`)).html.includes(key)).toBe(true);
    } finally {
      await page.close();
    }
  });

  it('a name that resolves to this machine (DNS rebinding) is served the page without the key', async () => {
    const key = gateway.key as string;
    const port = new URL(gateway.origin).port;
    const { status, html } = await served(`http://rebind.example:${port}/graphql`);
    expect(status).toBe(200);
    // The page is GraphiQL all the same, with the placeholder where the key would be.
    // (Booleans: the page is 9 MB, too much for a failure message.)
    expect(html.includes('Bearer <your API key>'), 'placeholder in the page').toBe(true);
    expect(html.includes(key), 'key in the page').toBe(false);
    for (const local of [`http://localhost:${port}/graphql`, `${gateway.origin}/graphql`]) {
      expect((await served(local)).html.includes(key), local).toBe(true);
    }
  });
});
