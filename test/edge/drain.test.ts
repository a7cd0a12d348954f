// @tier slow: a gateway process stopped with SIGTERM

import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type Started, startCommand } from '../../chaos/processes.ts';
import { freePort } from '../../chaos/traffic.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';

const TOKEN = 'drain-token';

/** Sends one request on an open keep-alive socket and resolves with the raw answer's head and body. */
function ask(socket: Socket, request: string): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk;
      const head = received.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(received)?.[1] ?? -1);
      if (head !== -1 && length >= 0 && Buffer.byteLength(received) >= head + 4 + length) {
        socket.off('data', onData);
        resolve(received);
      }
    };
    socket.on('data', onData);
    socket.write(request);
  });
}

describe('SIGTERM: the drain sequence', () => {
  let upstream: FakeUpstream;
  let gateway: Started | undefined;
  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    await upstream?.close();
  });

  it('readiness fails at once, answers on kept-alive connections say close, in-flight work finishes, and the process leaves as soon as it has', async () => {
    upstream = await startFakeUpstream();
    upstream.tokens.add(TOKEN);
    upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '9' });
    const port = await freePort();
    gateway = startCommand(
      process.execPath,
      ['src/main.ts'],
      { PORT: String(port), HOST: '127.0.0.1', UPSTREAM_URL: upstream.url, LOG_LEVEL: 'warn' },
      'gateway',
    );
    await gateway.waitFor(/ at http:\/\/\S+\/graphql/);
    const kept = connect(port, '127.0.0.1');
    const busy = connect(port, '127.0.0.1');
    await Promise.all([once(kept, 'connect'), once(busy, 'connect')]);
    expect(await ask(kept, 'GET /readiness HTTP/1.1\r\nhost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);

    // A query whose upstream call takes 1.5 s is in flight when SIGTERM comes.
    upstream.fault(/pets/, (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[{"id":1,"name":"Slow","categoryId":9}]');
      }, 1500);
    });
    const body = JSON.stringify({ query: '{ pets(limit: 1) { name } }' });
    const slow = ask(
      busy,
      `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalled = Date.now();
    const exited = gateway.stop('SIGTERM', 15_000);
    await gateway.waitFor(/SIGTERM, finishing in-flight requests/);

    const readiness = await ask(kept, 'GET /readiness HTTP/1.1\r\nhost: x\r\n\r\n');
    expect(readiness).toMatch(/^HTTP\/1\.1 503 /);
    expect(readiness).toMatch(/\r\nconnection: close\r\n/i);
    expect(readiness).toContain('"status":"draining"');
    // No new connections, a liveness probe's included (docs/operating.md says so).
    const refused = connect(port, '127.0.0.1');
    const [outcome] = await Promise.race([
      once(refused, 'error').then(([error]) => [(error as NodeJS.ErrnoException).code]),
      once(refused, 'connect').then(() => ['connected']),
    ]);
    expect(outcome).toBe('ECONNREFUSED');

    const answer = await slow;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain('"Slow"');
    expect(await exited).toBe(0);
    // Left once the slow answer was out (1.3 s after the signal), not at the 10 s drain timeout.
    expect(Date.now() - signalled).toBeLessThan(4000);
    expect(gateway.tail()).not.toContain('drain timeout');
  }, 30_000);
});
