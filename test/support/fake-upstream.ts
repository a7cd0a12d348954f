import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  isInt64,
  isPetStatus,
  LIST_LIMIT,
  PET_STATUSES,
  type PetStatus,
} from '../../src/contract/animal-store.ts';
import { ERRORS, type ErrorCode } from '../../src/contract/errors.ts';
import { type ContractRoute, matchRoute, ROUTES } from '../../src/contract/routes.ts';
import { REFERENCE_NAME, referenceNameLength, referenceNameProblem } from '../../src/petstore/names.ts';

/** One request as the fake upstream saw it. */
export interface LoggedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  /** W3C trace context, when the gateway traces. */
  traceparent: string | undefined;
  body: string;
}

/** Overrides the fake's contract behaviour for matching requests: write any answer, or none. */
export type Fault = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A request the fake held open (see `hold`), with when it arrived and how it ended, in `performance.now()` ms. */
export interface HeldRequest {
  method: string;
  path: string;
  arrivedAt: number;
  /** Its connection closed before the fake answered: the gateway gave the request up. */
  abortedAt?: number;
  /** The hold ended and the fake answered (as the contract, or a fault, says). */
  answeredAt?: number;
}

/** One request of a contract route, as the fake's handler for it gets it. */
interface FakeRequest {
  res: ServerResponse;
  body: string;
  url: URL;
  /** The route's path parameters by name, as they arrived. */
  params: Record<string, string>;
  /** The caller's pets. */
  store: StoredPet[];
}

export interface StoredPet {
  id: string;
  name: string;
  categoryId: string;
  status?: string;
}

/**
 * Answers a route the contract does not have (a test's own, declared as src/contract/routes.ts
 * declares the contract's) for an accepted key: its status and, unless undefined, the body as JSON.
 */
export type ExtraRoute = (request: {
  params: Record<string, string>;
  body: string;
  /** The caller's pets, which the contract's routes read and write too. */
  pets: StoredPet[];
}) => { status: number; pet?: StoredPet };

/**
 * A purpose-built upstream for gateway tests: real HTTP on 127.0.0.1, a request log, and fault
 * switches. It honours the contract, with one twist useful for isolation tests: every token has its
 * own store, so a caller can only ever see pets created with its own token.
 */
export interface FakeUpstream {
  /** Base URL ending in /v1. */
  url: string;
  requests: LoggedRequest[];
  /** Tokens the fake accepts (`Bearer <token>`); any other answers 401. */
  tokens: Set<string>;
  /** Adds a pet verbatim (raw int64 strings) to a token's store. */
  seed(token: string, pet: StoredPet): void;
  /** Replaces the contract behaviour for requests whose path matches: `times` times, or until cleared. */
  fault(match: RegExp, fault: Fault, times?: number): void;
  /**
   * Holds requests whose path matches for `ms` before answering them as usual, noting each in the
   * list returned; one whose connection closes while held is noted as aborted and never answered.
   */
  hold(match: RegExp, ms: number): HeldRequest[];
  /** Ends faults and holds (requests held now are still answered when their hold ends). */
  clearFaults(): void;
  /** Answers a route of a test's own, matched by its method and path as the contract's are. */
  serve(route: ContractRoute, answer: ExtraRoute): void;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** An Error body with the status the contract's table gives its code. */
function errorBody(res: ServerResponse, code: ErrorCode, message: string): void {
  const status = ERRORS[code];
  json(res, status, JSON.stringify({ code, message, status }));
}

// int64 values are kept as strings and written as bare integer literals, like a real int64 service.
function petJson(pet: StoredPet): string {
  const status = pet.status === undefined ? '' : `,"status":${JSON.stringify(pet.status)}`;
  return `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${status}}`;
}

/** 2^53 + 1: a double would turn it into ...992. */
export const BIG_ID = '9007199254740993';
export const MAX_INT64 = '9223372036854775807';

/**
 * The pets most gateway tests list: an int64 id beyond 2^53 with the largest categoryId, a sold
 * pet, and one with no status.
 */
export function seedPets(upstream: FakeUpstream, token: string): void {
  upstream.seed(token, { id: BIG_ID, name: 'Rex', categoryId: MAX_INT64, status: 'available' });
  upstream.seed(token, { id: '2', name: 'Tom', categoryId: '1', status: 'sold' });
  upstream.seed(token, { id: '3', name: 'Nemo', categoryId: '1' });
}

/** Why a `POST /pets` body is refused, in the reference service's codes; undefined when it is a NewPet. */
function newPetProblem(body: string): { code: ErrorCode; message: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { code: 'INVALID_JSON', message: 'Body is not JSON.' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { code: 'INVALID_BODY', message: 'The body must be a JSON object.' };
  const fields = parsed as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !['name', 'categoryId', 'status'].includes(key));
  if (unknown !== undefined) return { code: 'UNKNOWN_FIELD', message: `Unknown field "${unknown}".` };
  if (fields.name === undefined || fields.name === null)
    return { code: 'MISSING_FIELD', message: '"name" is required.' };
  if (typeof fields.name !== 'string' || !fields.name.isWellFormed())
    return { code: 'INVALID_FIELD', message: '"name" must be a string.' };
  // The contract leaves names open: the fake refuses what the reference service refuses.
  const length = referenceNameLength(fields.name);
  if (length < REFERENCE_NAME.min || length > REFERENCE_NAME.max)
    return {
      code: 'INVALID_FIELD',
      message: `"name" must be ${REFERENCE_NAME.min} to ${REFERENCE_NAME.max} characters long.`,
    };
  const problem = referenceNameProblem(fields.name.trim());
  if (problem !== undefined) return { code: 'INVALID_FIELD', message: problem };
  if (fields.categoryId === undefined || fields.categoryId === null)
    return { code: 'MISSING_FIELD', message: '"categoryId" is required.' };
  const literal = /"categoryId"\s*:\s*(-?\d+)\s*[,}]/.exec(body)?.[1];
  if (typeof fields.categoryId !== 'number' || literal === undefined || !isInt64(BigInt(literal)))
    return { code: 'INVALID_FIELD', message: '"categoryId" must be an int64 integer.' };
  if (fields.status !== undefined && fields.status !== null && !isPetStatus(fields.status))
    return { code: 'INVALID_FIELD', message: `"status" must be one of ${PET_STATUSES.join(', ')}.` };
  return undefined;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const stores = new Map<string, StoredPet[]>();
  const faults: Array<{ match: RegExp; fault: Fault; remaining: number }> = [];
  const holds: Array<{ match: RegExp; ms: number; held: HeldRequest[] }> = [];
  const requests: LoggedRequest[] = [];
  const tokens = new Set<string>();
  const sockets = new Set<Socket>();
  const extra = new Map<ContractRoute, ExtraRoute>();
  let nextId = 9007199254740993n; // 2^53 + 1: every id the fake assigns is beyond a double's reach

  const storeOf = (token: string) => {
    const store = stores.get(token) ?? [];
    stores.set(token, store);
    return store;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push({
      method: req.method ?? '',
      path: url.pathname + url.search,
      authorization: req.headers.authorization,
      traceparent: req.headers.traceparent as string | undefined,
      body,
    });
    const hold = holds.find(({ match }) => match.test(url.pathname + url.search));
    if (hold) return holdThenAnswer(req, res, body, url, hold.ms, hold.held);
    answer(req, res, body, url);
  };

  const holdThenAnswer = (
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    url: URL,
    ms: number,
    held: HeldRequest[],
  ) => {
    const record: HeldRequest = {
      method: req.method ?? '',
      path: url.pathname + url.search,
      arrivedAt: performance.now(),
    };
    held.push(record);
    const timer = setTimeout(() => {
      record.answeredAt = performance.now();
      answer(req, res, body, url);
    }, ms);
    res.on('close', () => {
      clearTimeout(timer);
      if (record.answeredAt === undefined) record.abortedAt = performance.now();
    });
  };

  /**
   * A handler for each of the contract's operations (src/contract/routes.ts), as the reference
   * service has (src/petstore/routes.ts HANDLERS): a route added there fails to compile here until
   * the fake answers it too, rather than answering NOT_FOUND.
   */
  const HANDLERS: { readonly [Operation in keyof typeof ROUTES]: (request: FakeRequest) => void } = {
    listPets({ res, url, store }) {
      const limits = url.searchParams.getAll('limit');
      const digits = /^0*(\d{1,3})$/.exec(limits[0] ?? '')?.[1];
      const limit = limits.length === 0 ? LIST_LIMIT.default : digits === undefined ? 0 : Number(digits);
      if (limits.length > 1 || !(limit >= LIST_LIMIT.min && limit <= LIST_LIMIT.max))
        return errorBody(
          res,
          'INVALID_LIMIT',
          `limit must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}.`,
        );
      const statuses = url.searchParams.getAll('status');
      const status = statuses[0];
      if (statuses.length > 1 || (status !== undefined && !isPetStatus(status)))
        return errorBody(res, 'INVALID_STATUS', `status must be one of ${PET_STATUSES.join(', ')}.`);
      const pets = store.filter((pet) => status === undefined || pet.status === status).slice(0, limit);
      return json(res, 200, `[${pets.map(petJson).join(',')}]`);
    },
    getPet({ res, params, store }) {
      const raw = params.petId ?? '';
      const digits = /^(-?)0*(\d{1,20})$/.exec(raw);
      const id = digits ? BigInt(`${digits[1]}${digits[2]}`) : undefined;
      if (id === undefined || !isInt64(id))
        return errorBody(
          res,
          'INVALID_PET_ID',
          `petId must be an int64 integer, got ${JSON.stringify(raw)}.`,
        );
      const pet = store.find((candidate) => candidate.id === String(id));
      return pet ? json(res, 200, petJson(pet)) : errorBody(res, 'PET_NOT_FOUND', `No pet with id ${id}.`);
    },
    createPet({ res, body, store }) {
      const refused = newPetProblem(body);
      if (refused) return errorBody(res, refused.code, refused.message);
      const parsed = JSON.parse(body) as { name: string; status?: PetStatus | null };
      // Keep categoryId's digits: capture the literal rather than trusting a JS number.
      const categoryId = String(BigInt(/"categoryId"\s*:\s*(-?\d+)/.exec(body)?.[1] ?? ''));
      const pet: StoredPet = { id: String(nextId++), name: parsed.name, categoryId };
      if (typeof parsed.status === 'string') pet.status = parsed.status;
      store.push(pet);
      return json(res, ROUTES.createPet.success.status, petJson(pet));
    },
  };

  const answer = (req: IncomingMessage, res: ServerResponse, body: string, url: URL) => {
    const fault = faults.find(
      ({ match, remaining }) => remaining > 0 && match.test(url.pathname + url.search),
    );
    if (fault) {
      fault.remaining -= 1;
      return fault.fault(req, res, body);
    }

    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !tokens.has(token))
      return errorBody(res, 'UNAUTHENTICATED', 'Missing or invalid API key.');
    const store = storeOf(token);

    // Requests are checked by the contract's rules (src/contract/), as the reference service checks
    // them: test/contract/table.test.ts holds both to one table of requests and answers.
    // The contract's routes (src/contract/routes.ts) say which operation a request is.
    const matched = matchRoute([...Object.values(ROUTES), ...extra.keys()], req.method, url.pathname, '/v1');
    const operation = matched?.route.operationId;
    const serveExtra = matched && extra.get(matched.route);
    if (serveExtra) {
      const answered = serveExtra({ params: matched.params, body, pets: store });
      if (answered.pet === undefined) {
        res.writeHead(answered.status);
        return res.end();
      }
      return json(res, answered.status, petJson(answered.pet));
    }
    const handler = operation === undefined ? undefined : HANDLERS[operation as keyof typeof ROUTES];
    if (handler) return handler({ res, body, url, params: matched?.params ?? {}, store });
    return errorBody(res, 'NOT_FOUND', 'No such route.');
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    tokens,
    seed: (token, pet) => storeOf(token).push(pet),
    fault: (match, fault, times = Number.POSITIVE_INFINITY) => {
      faults.push({ match, fault, remaining: times });
    },
    hold: (match, ms) => {
      const held: HeldRequest[] = [];
      holds.push({ match, ms, held });
      return held;
    },
    serve: (route, answer) => {
      extra.set(route, answer);
    },
    clearFaults: () => {
      faults.length = 0;
      holds.length = 0;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An upstream whose every list call takes `delayMs`: operations are surely in flight when a test
 * sends SIGTERM. Accepts the key `t`.
 */
export async function startSlowListUpstream(delayMs = 800): Promise<FakeUpstream> {
  const upstream = await startFakeUpstream();
  upstream.tokens.add('t');
  upstream.fault(/^\/v1\/pets\?/, (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"id":1,"name":"Slow","categoryId":1}]');
    }, delayMs);
  });
  return upstream;
}
