import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Answered, CODES } from '../codes.ts';
import type { ConnectionClose } from '../observability/metrics.ts';
import { errorBody, refuse, statusLine } from '../policy/error-body.ts';

export interface ConnectionLimits {
  /** Client connections held at once. */
  maxConnections: number;
  /** Connections one client address may hold at once (a peer exempted by `isProxy` has no share). */
  maxConnectionsPerAddress: number;
  /**
   * Connections accepted past the cap for `/health` and `/readiness` only, so a probe gets through
   * while the cap is held by busy or slow connections.
   */
  probeSlots: number;
  /**
   * A just-accepted connection that has not completed a request is not closed as idle for this
   * long: at the cap, clients would otherwise evict each other between connect and first request.
   */
  unparsedGraceMs: number;
  /** A request body must average at least this many bytes per second… */
  minBodyBytesPerSecond: number;
  /** …once this long has passed since its headers arrived (Kestrel's MinRequestBodyDataRate: 240 B/s after 5 s). */
  bodyGraceMs: number;
  /** A proxy's connections carry many clients: they do not count against one address's share. */
  isProxy: (address: string) => boolean;
  /** Told of every connection closed here. Must not throw. */
  onClose: (reason: ConnectionClose) => void;
}

type ClientSocket = Socket & {
  /** Node's own bookkeeping: the response assigned to the connection while a request is in flight. */
  _httpMessage?: ServerResponse | null;
  /**
   * Set by edge/websocket.ts on a socket it upgraded: it carries no HTTP message, and the
   * WebSocket server closes it itself on the drain.
   */
  longLived?: boolean;
  /** Said by the upgraded socket: `keyless` and `idle` ones may be closed to make room, `busy` ones not. */
  streamState?: () => 'keyless' | 'idle' | 'busy';
};

interface Held {
  socket: ClientSocket;
  address: string;
  acceptedAt: number;
  /** Set once a request's headers have arrived on it: it is past the unparsed grace. */
  served: boolean;
  probeOnly: boolean;
  /** The request whose body is still arriving, with when and at which byte count its body began. */
  body?: { req: IncomingMessage; res: ServerResponse; since: number; bytesAtStart: number };
  /** The body's answer has gone out and the rest of the body is being dropped (dropRest). */
  dropping?: boolean;
}

/**
 * How much of a body still arriving after its answer (a 413, a refusal sent before the body was
 * read) is read and dropped before the connection is cut. Closing with bytes unread makes the
 * kernel send a reset, which can overtake the answer: the client (Node's fetch, a browser) then
 * sees EPIPE or ECONNRESET instead of the 413. nginx's lingering close does the same.
 */
export const DROP_UNREAD_BODY = { ms: 5_000, bytes: 16 * 1024 * 1024 };
const DROP_CHECK_MS = 50;

const PROBE_PATHS = new Set(['/health', '/readiness']);

/**
 * Who may hold a connection, and for how long a slow one may keep it. Connections are admitted
 * against a total cap and a per-address share of it; at either, the oldest idle one (past the
 * unparsed grace) makes room, else the new one is refused. A few slots past the cap serve probes
 * only. A sweep once a second closes request bodies dripping in below the minimum rate: without
 * it, a few dozen sockets sending one byte every two seconds could hold every slot until the 30 s
 * request timeout, and reconnect.
 */
export function createConnectionAdmission(limits: ConnectionLimits) {
  const books: Books = { limits, held: new Map(), byAddress: new Map(), probes: 0, draining: false };
  const timer = setInterval(() => sweepSlowBodies(books), 1000);
  timer.unref();
  return {
    admit: (socket: ClientSocket): void => admit(books, socket),
    /**
     * Called with each request before the handler. False when it was answered here: a probe-only
     * connection asked for something other than a probe.
     */
    request: (req: IncomingMessage, res: ServerResponse): boolean => screen(books, req, res),
    /**
     * Called with each upgrade request before the WebSocket server. False when it was refused here:
     * a connection admitted past the cap for probes only may not become a long-lived stream.
     */
    upgrade: (req: IncomingMessage, socket: Duplex): boolean => screenUpgrade(books, req, socket),
    /** Closes every connection held, upgraded sockets too: the drain's deadline. */
    destroyAll: (): void => {
      for (const entry of [...books.held.values()]) entry.socket.destroy();
    },
    /**
     * From now on every response says `Connection: close`, including those in flight whose headers
     * are not out yet; after `idleGraceMs` the connections still idle are closed, and from then on
     * each one as soon as it is idle. Closing an idle keep-alive connection at once races a proxy
     * that is sending on it (nginx does not retry a POST it has sent): the grace lets the proxy use
     * each one last time, answered with `close`, or find this instance refusing new connections.
     */
    drain: (idleGraceMs: number): void => drain(books, idleGraceMs),
    /** Stops the sweep (the server is closing). */
    close: () => clearInterval(timer),
  };
}

/** The connections held and the counts admission decides by; one per listener. */
interface Books {
  limits: ConnectionLimits;
  /** Insertion order is age: the first idle entry found is the longest-held one. */
  held: Map<ClientSocket, Held>;
  byAddress: Map<string, Set<Held>>;
  /** Held connections that serve probes only (past the cap). */
  probes: number;
  draining: boolean;
}

/** Holds a new connection, making room at the cap or the address's share, else refuses it. */
function admit(books: Books, socket: ClientSocket): void {
  const { limits, held } = books;
  const now = Date.now();
  const address = socket.remoteAddress ?? '';
  let probeOnly = false;
  const mine = books.byAddress.get(address);
  if (mine !== undefined && mine.size >= limits.maxConnectionsPerAddress && !limits.isProxy(address)) {
    const idle = oldestIdle(limits, mine, now);
    if (idle !== undefined) evict(books, idle);
    else probeOnly = true;
  }
  if (!probeOnly && held.size - books.probes >= limits.maxConnections) {
    const idle = oldestIdle(limits, held.values(), now);
    if (idle !== undefined) evict(books, idle);
    else probeOnly = true;
  }
  if (probeOnly && books.probes >= limits.probeSlots) {
    // A probe asks at once: a probe slot still silent is a crowd's socket, and gives way.
    const silent = oldestSilentProbe(held);
    if (silent === undefined) {
      socket.destroy();
      limits.onClose('refused');
      return;
    }
    evict(books, silent);
  }
  hold(books, { socket, address, acceptedAt: now, served: false, probeOnly });
}

function hold(books: Books, entry: Held): void {
  if (entry.probeOnly) books.probes++;
  books.held.set(entry.socket, entry);
  // Looked up here, not before admission: an eviction may have emptied and dropped the address's set.
  const current = books.byAddress.get(entry.address);
  if (current === undefined) books.byAddress.set(entry.address, new Set([entry]));
  else current.add(entry);
  entry.socket.once('close', () => forget(books, entry));
  // Node closes a connection whose answer said `Connection: close` with destroySoon: the socket
  // is destroyed as soon as the answer is written, whatever the client is still sending.
  const destroySoon = entry.socket.destroySoon;
  entry.socket.destroySoon = () =>
    bodyUnread(entry) ? closeInStages(books, entry) : destroySoon.call(entry.socket);
}

/** The body of the connection's request is still arriving. */
function bodyUnread(entry: Held): boolean {
  return entry.body !== undefined && !entry.body.req.complete && !entry.socket.destroyed;
}

/**
 * RFC 9112 §9.6's close in stages: the answer, then this side's FIN, then what the client still
 * sends is read and dropped until it closes its side, within DROP_UNREAD_BODY.
 */
function closeInStages(books: Books, entry: Held): void {
  const { socket } = entry;
  socket.once('end', () => socket.destroy());
  socket.end();
  dropRest(books, entry);
}

/**
 * From now on what arrives of the body is dropped (Node reads it off the wire for an answered
 * request), checked every DROP_CHECK_MS: past DROP_UNREAD_BODY the connection is cut. A connection
 * kept alive is let go once the body has all arrived; one closing in stages waits for the client's
 * side to close.
 */
function dropRest(books: Books, entry: Held): void {
  const { socket, body } = entry;
  if (entry.dropping || body === undefined) return;
  entry.dropping = true;
  // Whoever read the body has its answer, but may have paused or destroyed its stream, and Node's
  // parser stops reading the socket whenever that stream refuses a chunk. _dump is what Node does
  // itself with a body nobody reads: the parser then drops the bytes instead of handing them on.
  (body.req as IncomingMessage & { _dump(): void })._dump();
  socket.resume();
  const until = Date.now() + DROP_UNREAD_BODY.ms;
  const bytesUntil = socket.bytesRead + DROP_UNREAD_BODY.bytes;
  const timer = setInterval(() => {
    const settled = socket.destroyed || (!socket.writableEnded && (entry.body !== body || body.req.complete));
    if (!settled && Date.now() < until && socket.bytesRead <= bytesUntil) return;
    clearInterval(timer);
    entry.dropping = false;
    if (settled) return;
    socket.destroy();
    books.limits.onClose('unread_body');
  }, DROP_CHECK_MS);
  timer.unref();
}

function isIdle(limits: ConnectionLimits, entry: Held, now: number): boolean {
  const { socket } = entry;
  const free = socket.longLived ? socket.streamState?.() !== 'busy' : socket._httpMessage == null;
  return free && (entry.served || now - entry.acceptedAt >= limits.unparsedGraceMs);
}

/**
 * The connection to close to make room: the oldest stream that has no key yet (it can do nothing
 * but wait), else the oldest idle connection, keep-alive or stream.
 */
function oldestIdle(limits: ConnectionLimits, entries: Iterable<Held>, now: number): Held | undefined {
  let idle: Held | undefined;
  for (const entry of entries) {
    if (entry.probeOnly || !isIdle(limits, entry, now)) continue;
    if (entry.socket.streamState?.() === 'keyless') return entry;
    idle ??= entry;
  }
  return idle;
}

function oldestSilentProbe(held: Map<ClientSocket, Held>): Held | undefined {
  for (const entry of held.values()) if (entry.probeOnly && !entry.served) return entry;
  return undefined;
}

function evict(books: Books, entry: Held): void {
  forget(books, entry);
  entry.socket.destroy();
  books.limits.onClose('evicted');
}

function forget(books: Books, entry: Held): void {
  if (!books.held.delete(entry.socket)) return;
  if (entry.probeOnly) books.probes--;
  const mine = books.byAddress.get(entry.address);
  mine?.delete(entry);
  if (mine?.size === 0) books.byAddress.delete(entry.address);
}

/** A request on a held connection: refused if the connection serves probes only, its body watched. */
function screen(books: Books, req: IncomingMessage, res: ServerResponse): boolean {
  // Draining: the client (a proxy's keep-alive pool) learns from this answer not to reuse the connection.
  if (books.draining) res.shouldKeepAlive = false;
  const entry = books.held.get(req.socket as ClientSocket);
  if (entry === undefined) return true;
  entry.served = true;
  if (entry.probeOnly) {
    const path = req.url?.split('?', 1)[0] ?? '';
    if (!PROBE_PATHS.has(path)) {
      res.shouldKeepAlive = false;
      refuse(res, CODES.OVERLOADED, 'The gateway is at its connection limit; retry shortly.', {
        'retry-after': '1',
      });
      books.limits.onClose('probe_only');
      return false;
    }
  }
  if (!req.complete && hasBody(req)) {
    // No 'end' listener to clear it: the sweep skips a body that has arrived, and the next request
    // on the connection replaces it (a listener per request was a closure and a wrapper each).
    entry.body = { req, res, since: Date.now(), bytesAtStart: req.socket.bytesRead };
  }
  return true;
}

/** An upgrade on a probe-only connection is answered 503, as any other request there is. */
function screenUpgrade(books: Books, req: IncomingMessage, socket: Duplex): boolean {
  const entry = books.held.get(req.socket as ClientSocket);
  if (entry === undefined) return true;
  entry.served = true;
  if (!entry.probeOnly && !books.draining) return true;
  const [answer, message]: [Answered, string] = books.draining
    ? [CODES.SHUTTING_DOWN, 'The gateway is shutting down; connect to another instance.']
    : [CODES.OVERLOADED, 'The gateway is at its connection limit; retry shortly.'];
  const body = errorBody(answer, message);
  socket.end(
    `HTTP/1.1 ${statusLine(answer)}\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 1\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  if (!books.draining) books.limits.onClose('probe_only');
  return false;
}

/**
 * Closes the connections whose request body, past its grace, averages under the minimum rate; one
 * whose answer has gone out is left to dropRest.
 */
function sweepSlowBodies(books: Books): void {
  const { limits } = books;
  const now = Date.now();
  for (const entry of books.held.values()) {
    const body = entry.body;
    if (body === undefined) continue;
    if (body.req.complete) {
      entry.body = undefined;
      continue;
    }
    // Answered while its body still arrives: Node reads the rest of a kept-alive one to its end.
    if (body.res.writableFinished) dropRest(books, entry);
    if (entry.dropping) continue;
    const elapsed = now - body.since;
    if (elapsed < limits.bodyGraceMs) continue;
    const received = entry.socket.bytesRead - body.bytesAtStart;
    if ((received * 1000) / elapsed >= limits.minBodyBytesPerSecond) continue;
    entry.body = undefined;
    tooSlow(entry.socket, body.res);
    limits.onClose('slow_body');
  }
}

function drain(books: Books, idleGraceMs: number): void {
  books.draining = true;
  for (const entry of books.held.values()) {
    const res = entry.socket._httpMessage;
    if (res && !res.headersSent) res.shouldKeepAlive = false;
  }
  const closeIdle = () => {
    for (const entry of books.held.values()) {
      if (entry.socket._httpMessage == null && !entry.socket.longLived) {
        forget(books, entry);
        entry.socket.destroy();
      }
    }
  };
  setTimeout(() => {
    closeIdle();
    setInterval(closeIdle, 100).unref();
  }, idleGraceMs).unref();
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const SLOW_BODY = errorBody(CODES.REQUEST_TIMEOUT, 'The request body arrived too slowly.');
const SLOW_ANSWER = `HTTP/1.1 ${statusLine(CODES.REQUEST_TIMEOUT)}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: ${Buffer.byteLength(SLOW_BODY)}\r\nconnection: close\r\n\r\n${SLOW_BODY}`;

function tooSlow(socket: ClientSocket, res: ServerResponse): void {
  // The handler still waits for the body; its response, if it ever writes one, goes nowhere.
  if (!res.headersSent && socket.writable) {
    socket.end(SLOW_ANSWER);
  }
  // A peer that never reads the answer would keep the half-closed socket: give it a second.
  setTimeout(() => socket.destroy(), 1000).unref();
}
