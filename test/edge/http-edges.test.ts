// @tier integration

import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

let gateway: RunningGateway;
useGateway({ tokens: [] }, (started) => {
  ({ gateway } = started);
});

/** Writes `head` (and a small JSON body) on a fresh connection and reads until the server closes or 2 s pass. */
function raw(head: string): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(gateway.origin);
  const body = '{"query":"{ __typename }"}';
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    const done = () => {
      socket.destroy();
      const [headers = '', ...rest] = text.split('\r\n\r\n');
      const after = rest.join('\r\n\r\n');
      // A chunked body: the chunks' data without their size lines.
      const body = /transfer-encoding: chunked/i.test(headers)
        ? after
            .split('\r\n')
            .filter((_line, i) => i % 2 === 1)
            .join('')
        : after;
      resolve({ status: Number(headers.split(' ')[1]), headers, body });
    };
    const timer = setTimeout(done, 2000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      text += chunk;
      if (/content-length: (\d+)/i.test(text) && text.includes('\r\n\r\n')) {
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1]);
        if (Buffer.byteLength(text.split('\r\n\r\n')[1] ?? '', 'latin1') >= length) {
          clearTimeout(timer);
          done();
        }
      }
    });
    socket.on('end', () => {
      clearTimeout(timer);
      done();
    });
    socket.on('error', reject);
    socket.write(
      `${head.trim().replaceAll('\n', '\r\n')}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
  });
}

describe('HTTP edges answered with a JSON error (#39 item 7)', () => {
  it('refuses two Host headers with 400 BAD_REQUEST (RFC 9112 §3.2)', async () => {
    const answer = await raw('POST /graphql HTTP/1.1\nHost: 127.0.0.1\nHost: evil.example');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).errors[0]).toMatchObject({
      message: 'Send exactly one Host header.',
      extensions: { code: 'BAD_REQUEST' },
    });
  });

  it('refuses an HTTP/1.1 request without Host with 400 BAD_REQUEST and a JSON body', async () => {
    const answer = await raw('POST /graphql HTTP/1.1');
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('answers an unknown Expect with 417 EXPECTATION_FAILED and a JSON body', async () => {
    const answer = await raw('POST /graphql HTTP/1.1\nHost: 127.0.0.1\nExpect: teapot');
    expect(answer.status).toBe(417);
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('EXPECTATION_FAILED');
  });

  it('still serves Expect: 100-continue and one Host', async () => {
    const answer = await raw(
      'POST /graphql HTTP/1.1\nHost: 127.0.0.1\nExpect: 100-continue\nConnection: close',
    );
    expect(answer.headers).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(answer.body).toContain('HTTP/1.1 200');
  });
});
