// @tier slow: npm start behind the settings it reads addresses with

import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createClientAddresses } from '../../src/edge/client-address.ts';
import { npmStart } from '../support/npm-start.ts';

/** The parts of a Node request the client address is read from. */
function req(peer: string, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

describe('the client address', () => {
  it('is the peer without TRUSTED_PROXIES, whatever the headers say', () => {
    const addresses = createClientAddresses([]);
    expect(addresses.of(req('10.1.2.3', { 'x-forwarded-for': '1.2.3.4' }))).toBe('10.1.2.3');
    expect(addresses.of(req('::ffff:10.1.2.3', { forwarded: 'for=1.2.3.4' }))).toBe('10.1.2.3');
    expect(addresses.isProxy('10.1.2.3')).toBe(false);
  });

  it('is the peer when the peer is not trusted', () => {
    const addresses = createClientAddresses(['10.0.0.0/8']);
    expect(addresses.of(req('192.0.2.1', { 'x-forwarded-for': '1.2.3.4' }))).toBe('192.0.2.1');
  });

  it('walks X-Forwarded-For from the right past trusted hops', () => {
    const addresses = createClientAddresses(['10.0.0.0/8', 'fd00::/8']);
    expect(addresses.of(req('10.0.0.5', { 'x-forwarded-for': '198.51.100.9' }))).toBe('198.51.100.9');
    // The client wrote 203.0.113.66 itself; the proxies appended the rest.
    expect(addresses.of(req('10.0.0.5', { 'x-forwarded-for': '203.0.113.66, 198.51.100.9, 10.0.0.7' }))).toBe(
      '198.51.100.9',
    );
    expect(addresses.of(req('::ffff:10.0.0.5', { 'x-forwarded-for': '2001:db8::1, fd00::3' }))).toBe(
      '2001:db8::1',
    );
    // Every hop trusted: the leftmost is the furthest known.
    expect(addresses.of(req('10.0.0.5', { 'x-forwarded-for': '10.0.0.9, 10.0.0.8' }))).toBe('10.0.0.9');
    // No header: the proxy itself.
    expect(addresses.of(req('10.0.0.5'))).toBe('10.0.0.5');
    // A hop that is not an address stops the walk at the proxy that wrote it.
    expect(addresses.of(req('10.0.0.5', { 'x-forwarded-for': '198.51.100.9, unknown, 10.0.0.7' }))).toBe(
      '10.0.0.7',
    );
  });

  it('reads RFC 7239 Forwarded when X-Forwarded-For is absent', () => {
    const addresses = createClientAddresses(['127.0.0.1']);
    expect(
      addresses.of(
        req('127.0.0.1', {
          forwarded: 'for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"',
        }),
      ),
    ).toBe('2001:db8:cafe::17');
    expect(addresses.of(req('127.0.0.1', { forwarded: 'for="192.0.2.60:8080"' }))).toBe('192.0.2.60');
    expect(addresses.of(req('127.0.0.1', { forwarded: 'for=_hidden' }))).toBe('127.0.0.1');
  });
});

describe('the operation log line, as npm start writes it', () => {
  async function loggedAddress(env: Record<string, string>): Promise<string | undefined> {
    const gateway = await npmStart(env);
    try {
      const response = await fetch(`${gateway.origin}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${gateway.key}`,
          'x-forwarded-for': '203.0.113.66, 198.51.100.7',
        },
        body: JSON.stringify({ query: 'query Logged { pets(limit: 1) { id } }' }),
      });
      expect(response.status).toBe(200);
      // The whole line: a chunk of the pipe may end inside it.
      const [, line = ''] = await gateway.waitFor(/^(.*"operationName":"Logged".*)\n/m, 5000);
      return (JSON.parse(line) as { clientAddress?: string }).clientAddress;
    } finally {
      await gateway.stop();
    }
  }

  it('records the forwarded client behind a trusted proxy, and the peer otherwise', async () => {
    expect(await loggedAddress({ TRUSTED_PROXIES: '127.0.0.1' })).toBe('198.51.100.7');
    expect(await loggedAddress({})).toBe('127.0.0.1');
  });
});
