// @tier ci: 30 s of npm start under good and bad subscribers

import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { type SseSubscription, subscribeSse } from '../support/sse.ts';

// The soak docs/limits.md cites: `npm start` as users run it, a crowd of well-behaved subscribers
// beside clients that never read, that flood and that vanish, for SOAK_SECONDS (30 in `npm test`;
// `SOAK_SECONDS=60 npx vitest run test/live/soak.test.ts` for the minute the docs name). Every
// well-behaved subscriber must see every change, the process's RSS must stay under RSS_BOUND_MB,
// and SIGTERM must end it all within the drain's 10 s window.

const SECONDS = Number(process.env.SOAK_SECONDS ?? 30);
/** The bound docs/limits.md states for this soak. */
const RSS_BOUND_MB = 400;
const LIST = 'subscription { pets(limit: 100, status: PENDING) { id name } }';

const rssMb = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

let gateway: StartedGateway | undefined;
afterAll(async () => {
  await gateway?.stop();
});

/** A raw SSE subscriber that never reads a byte: its answers stay in the gateway's buffers. */
function neverReadingSse(port: number, key: string): Socket {
  const socket = connect(port, '127.0.0.1', () => {
    socket.pause();
    const body = JSON.stringify({ query: LIST });
    socket.write(
      `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: text/event-stream\r\nauthorization: Bearer ${key}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
  });
  socket.on('error', () => {});
  return socket;
}

/** A graphql-ws client that stops reading, then floods pings until it is closed. */
function floodingWs(url: string, key: string): WebSocket {
  const ws = new WebSocket(url, 'graphql-transport-ws');
  ws.on('error', () => {});
  ws.on('open', () => {
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
    const flood = setInterval(() => {
      if (ws.readyState !== WebSocket.OPEN) return clearInterval(flood);
      for (let i = 0; i < 100; i++) ws.send('{"type":"ping"}');
    }, 20);
  });
  return ws;
}

/** A graphql-ws client that subscribes and drops its connection a moment later. */
function vanishingWs(url: string, key: string): void {
  const ws = new WebSocket(url, 'graphql-transport-ws');
  ws.on('error', () => {});
  ws.on('open', () => {
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: LIST } }));
    setTimeout(() => ws.terminate(), 150);
  });
}

describe('a minute of good and bad clients', { timeout: (SECONDS + 60) * 1000 }, () => {
  it('keeps RSS bounded, gives every well-behaved subscriber every change, and drains in the window', async () => {
    // One key for all (the embedded store knows one): its cap is raised so the crowd fits beside the others.
    gateway = await npmStart({
      LOG_LEVEL: 'error',
      LIVE_POLL_MS: '1000',
      LIVE_SLOW_READER_MS: '3000',
      LIVE_MAX_PER_KEY: '500',
    });
    const { origin, pid } = gateway;
    const key = gateway.key as string;
    const port = Number(new URL(origin).port);
    const wsUrl = `${origin.replace(/^http/, 'ws')}/graphql`;
    const good: SseSubscription[] = await Promise.all(
      Array.from({ length: 20 }, () => subscribeSse(`${origin}/graphql`, { query: LIST }, `Bearer ${key}`)),
    );
    for (const subscriber of good) await subscriber.waitForEvents(1);

    const bad: Array<Socket | WebSocket> = [];
    let peakMb = rssMb(pid);
    const created: string[] = [];
    const end = Date.now() + SECONDS * 1000;
    for (let tick = 0; Date.now() < end; tick++) {
      // Every second: new non-readers and flooders replace those the gateway closed; some vanish.
      for (let i = 0; i < 2; i++) bad.push(neverReadingSse(port, key), floodingWs(wsUrl, key));
      for (let i = 0; i < 5; i++) vanishingWs(wsUrl, key);
      // Every other second, a change every well-behaved subscriber must see.
      if (tick % 2 === 0) {
        const name = `Soak ${tick}`;
        const answer = await fetch(`${origin}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({
            query: `mutation { createPet(input: { name: "${name}", categoryId: "1", status: PENDING }) { id } }`,
          }),
        });
        expect(answer.status).toBe(200);
        created.push(name);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      peakMb = Math.max(peakMb, rssMb(pid));
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const subscriber of good) {
      const seen = new Set(
        subscriber.events.flatMap((event) =>
          ((event.data as { pets?: Array<{ name: string }> } | undefined)?.pets ?? []).map((pet) => pet.name),
        ),
      );
      expect(created.filter((name) => !seen.has(name))).toEqual([]);
      expect(subscriber.ended).toBe(false);
    }
    expect(peakMb).toBeLessThan(RSS_BOUND_MB);

    const stopping = performance.now();
    await gateway.stop();
    expect(gateway.exit()).toBe(0);
    expect(performance.now() - stopping).toBeLessThan(10_000);
    for (const client of bad) client instanceof WebSocket ? client.terminate() : client.destroy();
    console.log(
      `soak: ${SECONDS} s, peak RSS ${peakMb.toFixed(0)} MB, ${created.length} changes, drained in ${(performance.now() - stopping).toFixed(0)} ms`,
    );
  });
});
