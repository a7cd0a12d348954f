// @tier slow: npm start in a process of its own (in one process, client and server take turns and the reset never overtakes the answer)

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DROP_UNREAD_BODY } from '../../src/edge/connections.ts';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

// A body over MAX_BODY_BYTES is refused with 413 before it has all arrived. Closing the socket
// with the rest of it unread makes the kernel send a reset, which can reach the client before it
// has read the 413: Node's fetch then sees EPIPE or ECONNRESET instead of the answer. The
// gateway closes in stages instead (RFC 9112 §9.6): the answer, then its half of the connection,
// then it reads and drops what the client still sends, up to a bound.

const MAX_BODY_BYTES = 64 * 1024;
let gateway: StartedGateway;
beforeAll(async () => {
  gateway = await npmStart({ MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
});
afterAll(async () => {
  await gateway?.stop();
});

const FIVE_MB = JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(5 * 1024 * 1024) });

/** What fetch made of one try: the status and error code, or the error that stopped it. */
async function post(body: BodyInit, init: RequestInit = {}, path = '/graphql'): Promise<string> {
  try {
    const response = await fetch(`${gateway.origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      ...init,
    });
    const answer = (await response.json()) as {
      errors?: Array<{ extensions?: { code?: string } }>;
      error?: { message: string };
    };
    return `${response.status} ${answer.errors?.[0]?.extensions?.code ?? answer.error?.message}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return `failed: ${cause?.code ?? cause?.message ?? String(error)}`;
  }
}

describe('a refused large upload is readable', () => {
  it('fetch sending 5 MB with a Content-Length sees 413 PAYLOAD_TOO_LARGE in 20 of 20 tries', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) seen.push(await post(FIVE_MB));
    expect(seen).toEqual(Array(20).fill('413 PAYLOAD_TOO_LARGE'));
  });

  it('fetch streaming 5 MB with no length (chunked) sees 413 in 10 of 10 tries', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      const bytes = new TextEncoder().encode(FIVE_MB);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 64 * 1024)
            controller.enqueue(bytes.subarray(at, at + 64 * 1024));
          controller.close();
        },
      });
      seen.push(await post(stream, { duplex: 'half' } as RequestInit));
    }
    expect(seen).toEqual(Array(10).fill('413 PAYLOAD_TOO_LARGE'));
  });

  it('an MCP client sending 5 MB sees its JSON-RPC 413 in 10 of 10 tries', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 10; i++)
      seen.push(
        await post(
          FIVE_MB,
          {
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              authorization: `Bearer ${gateway.key}`,
            },
          },
          '/mcp',
        ),
      );
    expect(seen).toEqual(
      Array(10).fill(`413 The request body is over ${MAX_BODY_BYTES} bytes (MAX_BODY_BYTES).`),
    );
  });

  it('a client that goes on sending after the 413 is read from up to the bound, then cut off', async () => {
    const { port } = new URL(gateway.origin);
    // Half-open allowed: it goes on sending after the gateway's FIN, as a client that does not read.
    const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => {});
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    );
    const chunk = 'x'.repeat(64 * 1024);
    const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    let sent = 0;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let open = true;
    void closed.then(() => {
      open = false;
    });
    const answered = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    // Sends for as long as the gateway reads, at most 512 MB: far past any bound it keeps. Once well past
    // the cap it waits for the answer before sending on: a write that meets the gateway's final
    // reset destroys the socket with the answer unread in its buffer, and a client starved of CPU
    // while the kernel's buffers hold the rest could otherwise meet it first.
    while (open && sent < 512 * 1024 * 1024) {
      if (!socket.write(frame)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
      sent += frame.length;
      if (sent >= 4 * MAX_BODY_BYTES && answer === '') await Promise.race([answered, closed]);
    }
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('PAYLOAD_TOO_LARGE');
    // The gateway read and dropped the bound's bytes after its answer, then cut the connection,
    // long before the client would have stopped.
    expect(sent).toBeGreaterThan(DROP_UNREAD_BODY.bytes);
    expect(sent).toBeLessThan(512 * 1024 * 1024);
  });
});
