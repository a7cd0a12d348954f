/**
 * Floods of documents the gateway has never seen, and what the gateway's process holds meanwhile:
 * for test/hardening/document-floods.test.ts, and for measuring a minute of each by hand. Every
 * request carries a new document text, so every cache keyed by a document's text (or its shape)
 * gets a new entry from each.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import WebSocket from 'ws';

/** What one flood sends, request after request: a new body each time. */
export type FloodKind = 'valid' | 'invalid' | 'variables';

/** Unknown fields in one invalid document: each is one validation error the cache could keep. */
const UNKNOWN_FIELDS = 20;
/** The large variable of a keyless invalid query: under MAX_BODY_BYTES (64 KiB) with the rest. */
const VARIABLE_BYTES = 60_000;

let counter = 0;
const fresh = () => `${(counter++).toString(36)}${Math.random().toString(36).slice(2, 10)}`;

/**
 * The body of one request of `kind`, never sent before:
 * - valid: one aliased `pets` (a new alias each time), which runs upstream with the key;
 * - invalid: `pets` with unknown fields of new names, refused by validation;
 * - variables: an invalid document, without a key, with a 60 kB variable the refusal must not keep.
 */
export function floodBody(kind: FloodKind): string {
  if (kind === 'valid') return JSON.stringify({ query: `{ a${fresh()}: pets(limit: 1) { id name } }` });
  const fields = Array.from({ length: UNKNOWN_FIELDS }, () => `f${fresh()}`).join(' ');
  if (kind === 'invalid') return JSON.stringify({ query: `{ pets { ${fields} } }` });
  return JSON.stringify({
    query: `query Big($note: String) { pets { ${fields} } }`,
    variables: { note: `${fresh()}${'x'.repeat(VARIABLE_BYTES)}` },
  });
}

/**
 * Sends `kind` over `connections` keep-alive connections, each one request at a time, for
 * `seconds`; calls `tick` after every request (to sample memory). Resolves with the requests sent.
 * Every answer must be the one its kind gets (data for the valid, a validation error for the
 * others), or it throws.
 */
export async function flood(
  origin: string,
  kind: FloodKind,
  options: { seconds: number; connections: number; key?: string; tick?: () => void },
): Promise<number> {
  const dispatcher = new Agent({ connections: options.connections, pipelining: 1 });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (kind === 'valid' && options.key) headers.authorization = `Bearer ${options.key}`;
  const expected = kind === 'valid' ? '{"data":{"a' : '{"errors":[{"message":"Cannot query field';
  const end = performance.now() + options.seconds * 1000;
  let sent = 0;
  const connection = async () => {
    while (performance.now() < end) {
      const answer = await request(`${origin}/graphql`, {
        method: 'POST',
        headers,
        body: floodBody(kind),
        dispatcher,
      });
      const text = await answer.body.text();
      if (answer.statusCode !== 200 || !text.startsWith(expected)) {
        throw new Error(`${kind}: ${answer.statusCode} ${text.slice(0, 300)}`);
      }
      sent += 1;
      options.tick?.();
    }
  };
  try {
    await Promise.all(Array.from({ length: options.connections }, connection));
  } finally {
    await dispatcher.close();
  }
  return sent;
}

/** The process's resident set, in MB (Linux's /proc). */
export function rssMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? Number.NaN) / 1024;
}

/** NODE_OPTIONS that open the inspector on a free loopback port, for `inspectorOf`. */
export const INSPECTOR_OPTIONS = '--inspect=127.0.0.1:0';

/** A process's inspector: a full garbage collection, and the heap it then uses. */
export interface Inspector {
  /** A full, forced garbage collection (as `global.gc()` would be, in the gateway's process). */
  collectGarbage(): Promise<void>;
  /** V8's own figures, in MB: the heap in use, the heap's size, and array buffers' backing stores. */
  heapUsage(): Promise<{ used: number; total: number; buffers: number }>;
  close(): void;
}

/**
 * Connects to the inspector a process opened with INSPECTOR_OPTIONS, given its output's
 * `Debugger listening on ws://…` line. The memory a cache keeps is what survives a forced full
 * collection: measured so, it waits on no guess of when V8 collects by itself.
 */
export async function inspectorOf(
  waitFor: (pattern: RegExp) => Promise<RegExpExecArray>,
): Promise<Inspector> {
  const [, url] = await waitFor(/Debugger listening on (ws:\/\/\S+)/);
  const socket = new WebSocket(url as string);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const call = (method: string) =>
    new Promise<unknown>((resolve) => {
      id += 1;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method }));
    });
  return {
    async collectGarbage() {
      // Twice: what the first frees may hold the last references to more (weak maps' values).
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
    },
    async heapUsage() {
      const usage = (await call('Runtime.getHeapUsage')) as {
        usedSize: number;
        totalSize: number;
        backingStorageSize?: number;
      };
      const mb = (bytes = 0) => bytes / 1024 / 1024;
      return { used: mb(usage.usedSize), total: mb(usage.totalSize), buffers: mb(usage.backingStorageSize) };
    },
    close: () => socket.close(),
  };
}
