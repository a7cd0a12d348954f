// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

let upstream: FakeUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({
    upstreamUrl: upstream.url,
    gateway: { graphiqlAuthorization: 'Bearer dev-k' },
  });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const page = (headers: Record<string, string> = {}) =>
  fetch(gateway.url, { headers: { accept: 'text/html', ...headers } });

describe('the GraphiQL page, which may hold the key (#39 item 6)', () => {
  it('may not be framed by another origin, and is never sniffed', async () => {
    for (const encoding of ['identity', 'gzip', 'br']) {
      const response = await page({ 'accept-encoding': encoding });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      await response.arrayBuffer();
    }
  });

  it('says Vary once per header: Accept (the same URL answers JSON) and Accept-Encoding', async () => {
    for (const headers of [{}, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
      const response = await page(headers);
      await response.arrayBuffer();
      const vary = (response.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase());
      expect(vary.sort()).toEqual(['accept', 'accept-encoding']);
    }
  });

  it('tells GraphiQL not to keep the headers (the key) in localStorage', async () => {
    const html = await (await page()).text();
    expect(html).toContain('Bearer dev-k');
    expect(html).toMatch(/"shouldPersistHeaders":\s*false/);
  });
});
