import { createdPetId, listedPets, type PetIds } from './static-upstream.ts';

export type TargetKind =
  | 'gateway'
  | 'gateway-yoga'
  /** The default gateway with LOG_LEVEL=warn: the price of the default log line, beside it. */
  | 'gateway-warn'
  | 'gateway-workers'
  /** --baseline: the gateway of another checkout, beside this one's. */
  | 'gateway-baseline'
  | 'bare-proxy'
  | 'json-hop'
  | 'tailcall'
  /** Hive Gateway serving a GraphQL Mesh OpenAPI source (hive-mesh.ts). */
  | 'hive-mesh'
  | 'direct';
/** Targets that sit between the load and the upstream, each in its own process. */
export type HopKind = Exclude<TargetKind, 'direct'>;
/** `static-bigids` is the static upstream serving int64 ids beyond 2^53. */
export type UpstreamKind = 'static' | 'static-bigids' | 'reference';

/**
 * The bearer keys a run rotates across its requests, one per caller of a crowd: every upstream
 * accepts each of them and the hops forward each caller's own, so nothing keyed by caller (the
 * gateway's coalescing, a cache) can merge two callers' requests.
 */
export function apiKeys(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `bench-key-${i}`);
}

/**
 * A body that differs on every request: `before + token + after`, with a token unique to the
 * request. Strings rather than a function, so wrk's Lua script can build the same bodies.
 */
export interface CountedBody {
  before: string;
  after: string;
}

/** One HTTP request shape, sent to a target's announced URL + `path`. */
export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  body?: string | CountedBody;
  /** Returns what is wrong with an answer, or undefined when it is the expected one. */
  check(status: number, body: string): string | undefined;
}

/** The headers of a request of `spec` made with `key`. */
export function headersOf(spec: RequestSpec, key: string): Record<string, string> {
  const authorization = `Bearer ${key}`;
  return spec.body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' };
}

/** A spec's body for one request; `token` (letters, digits, `_`) must be unique to it when counted. */
export function bodyText(spec: RequestSpec, token: string): string | undefined {
  const body = spec.body;
  return body === undefined || typeof body === 'string' ? body : body.before + token + body.after;
}

export interface Workload {
  name: string;
  /** What one operation is, for the report. */
  title: string;
  upstream: UpstreamKind;
  targets: Partial<Record<TargetKind, RequestSpec>>;
  /** Which baseline each ratio compares against, when it is not one REST call. */
  baselineNote?: string;
  /**
   * A fixed offered load (requests/s over all connections) instead of as fast as the target
   * answers. At saturation every target's latency is connections ÷ throughput (Little's law), so
   * only a fixed rate shows what the hop itself adds to a request.
   */
  rate?: number;
  /** Connections for this workload instead of --connections (a steady rate wants few). */
  connections?: number;
}

/** Which ids a static upstream serves. */
export function petIdsOf(kind: UpstreamKind): PetIds | undefined {
  return kind === 'static' ? 'small' : kind === 'static-bigids' ? 'int64' : undefined;
}

const FIELDS = 'id name categoryId status';

/** Checks an answer's raw text, where JSON.parse alone would hide a rounded int64. */
type ExactCheck = (text: string) => string | undefined;

/** Stands for the per-request token in a query's text; survives JSON.stringify unchanged. */
const TOKEN = '__TOKEN__';

/** A GraphQL POST; a query containing TOKEN becomes a counted body. */
function graphql(query: string, check: (data: unknown) => string | undefined, exact?: ExactCheck) {
  const text = JSON.stringify({ query });
  const [before = '', after] = text.split(TOKEN);
  return {
    method: 'POST',
    path: '',
    body: after === undefined ? text : { before, after },
    check: envelopeCheck(check, exact),
  } satisfies RequestSpec;
}

/**
 * `{ pets(limit: N) { … } }` asked of hive-mesh's schema (hive-mesh.ts), which Mesh names after the
 * contract: the field after the operationId (`listPets`), each item a union of the 200 answer
 * (`Pet`) and the error bodies, so the fields are selected on `Pet`. The alias keeps the answer in
 * the gateway's shape, so the gateway's check reads it.
 */
const hiveMeshList = (limit: number) => `{ pets: listPets(limit: ${limit}) { ... on Pet { ${FIELDS} } } }`;

/** The same spec for both gateway processes: fast lane on (the default) and off. */
const gateways = (spec: RequestSpec) => ({ gateway: spec, 'gateway-yoga': spec });

/** A GraphQL-shaped answer (`{"data":…}`, status 200) to any request: the gateways' and json-hop's. */
function envelopeCheck(check: (data: unknown) => string | undefined, exact?: ExactCheck) {
  return (status: number, text: string) => {
    if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
    const result = JSON.parse(text) as { data?: unknown; errors?: unknown };
    if (result.errors !== undefined) return `GraphQL errors: ${JSON.stringify(result.errors).slice(0, 300)}`;
    return check(result.data) ?? exact?.(text);
  };
}

/** A REST request (to a hop's route or the upstream itself), its answer read by `check`. */
function rest(method: 'GET' | 'POST', path: string, check: RequestSpec['check'], body?: string) {
  return { method, path, ...(body === undefined ? {} : { body }), check } satisfies RequestSpec;
}

/** A plain REST answer: the expected status, and a body `check` reads (`exact` its raw text). */
function restCheck(expectedStatus: number, check: (body: unknown) => string | undefined, exact?: ExactCheck) {
  return (status: number, text: string) =>
    status !== expectedStatus
      ? `status ${status}: ${text.slice(0, 300)}`
      : (check(JSON.parse(text)) ?? exact?.(text));
}

/**
 * Every `id` and `categoryId` in a JSON text, in order, as the decimal text it holds: the source
 * of a number (however large), the value of a string.
 */
function int64Texts(text: string): { ids: string[]; categoryIds: string[] } {
  const ids: string[] = [];
  const categoryIds: string[] = [];
  JSON.parse(text, (key, value, context?: { source?: string }) => {
    if (key === 'id' || key === 'categoryId') {
      const decimal = typeof value === 'number' ? (context?.source ?? String(value)) : String(value);
      (key === 'id' ? ids : categoryIds).push(decimal);
    }
    return value;
  });
  return { ids, categoryIds };
}

/** The listed pets' ids and category ids, exactly as the static upstream sent them. */
function sameIds(expected: ReadonlyArray<{ id: string; categoryId: string }>): ExactCheck {
  const ids = expected.map((p) => p.id).join(',');
  const categoryIds = expected.map((p) => p.categoryId).join(',');
  return (text) => {
    const got = int64Texts(text);
    if (got.ids.join(',') !== ids)
      return `ids differ from the upstream's: ${got.ids.slice(0, 3).join(', ')}…`;
    if (got.categoryIds.join(',') !== categoryIds)
      return `category ids differ from the upstream's: ${got.categoryIds.slice(0, 3).join(', ')}…`;
    return undefined;
  };
}

const isPet = (value: unknown): boolean => {
  const pet = value as Record<string, unknown> | null;
  return (
    typeof pet === 'object' &&
    pet !== null &&
    (typeof pet.id === 'string' || typeof pet.id === 'number') &&
    typeof pet.name === 'string' &&
    pet.categoryId !== undefined
  );
};

const petList = (count: number) => (value: unknown) =>
  Array.isArray(value) && value.length === count && value.every(isPet)
    ? undefined
    : `expected ${count} pets, got ${JSON.stringify(value).slice(0, 200)}`;

const dataField = (field: string, check: (value: unknown) => string | undefined) => (data: unknown) =>
  check((data as Record<string, unknown> | null)?.[field]);

/**
 * Well below every target's capacity on the 2-core machine the figures come from (the gateway's is
 * ~3k req/s), over few connections: autocannon paces each connection on its own timer, and 50
 * connections would arrive as bursts of 50 that queue behind each other.
 */
const STEADY = { rate: 1000, connections: 4 };

function listWorkload(
  name: string,
  limit: number,
  upstream: UpstreamKind,
  options: {
    steady?: { rate: number; connections: number };
    direct?: boolean;
    /** Tailcall answers the same query (its ids as JSON numbers, which the checks read exactly). */
    tailcall?: boolean;
    /** Hive Gateway + Mesh answers the same list under its own names, checked as the gateway's answer. */
    hiveMesh?: boolean;
    /** `WORKERS=2 npm start` answers it too: what a user gets per machine (reported, not a goal). */
    workers?: boolean;
    titleNote?: string;
  } = {},
): Workload {
  const { steady, direct = true, tailcall = false, hiveMesh = false } = options;
  const ids = petIdsOf(upstream);
  // On a static upstream every id is known: each target must return them exactly.
  const exact = ids === undefined ? undefined : sameIds(listedPets(ids, limit));
  const query = graphql(`{ pets(limit: ${limit}) { ${FIELDS} } }`, dataField('pets', petList(limit)), exact);
  const meshQuery = graphql(hiveMeshList(limit), dataField('pets', petList(limit)), exact);
  const restList = rest('GET', `/pets?limit=${limit}`, restCheck(200, petList(limit), exact));
  return {
    name,
    ...steady,
    title:
      `{ pets(limit: ${limit}) { ${FIELDS} } }  ≙  GET /v1/pets?limit=${limit}` +
      (steady ? `, a steady ${steady.rate} req/s over ${steady.connections} connections` : '') +
      (options.titleNote ?? ''),
    upstream,
    targets: {
      ...gateways(query),
      'bare-proxy': restList,
      'json-hop': rest(
        'GET',
        `/pets?limit=${limit}`,
        envelopeCheck(dataField('pets', petList(limit)), exact),
      ),
      ...(tailcall ? { tailcall: query, 'gateway-warn': query } : {}),
      ...(hiveMesh ? { 'hive-mesh': meshQuery } : {}),
      ...(options.workers ? { 'gateway-workers': query } : {}),
      ...(direct ? { direct: restList } : {}),
    },
  };
}

const DEDUP_IDS = ['1', '2', '3', '4', '5'];
const DEDUP_QUERY = `{ ${Array.from({ length: 10 }, (_, i) => `p${i}: pet(id: "${DEDUP_IDS[i % DEDUP_IDS.length]}") { ${FIELDS} }`).join(' ')} }`;

const CREATE_INPUT = JSON.stringify({ name: 'Bench', categoryId: 1, status: 'available' });
const CREATE_MUTATION = `mutation { createPet(input: { name: "Bench", categoryId: "1", status: AVAILABLE }) { ${FIELDS} } }`;
const CREATED_PET_ID = createdPetId('small');
const createdPet = (value: unknown) =>
  isPet(value) && String((value as { id: unknown }).id) === CREATED_PET_ID
    ? undefined
    : `expected pet ${CREATED_PET_ID}, got ${JSON.stringify(value).slice(0, 200)}`;

/** The five list queries a `batch5` request holds: distinct limits, so five upstream calls. */
const BATCH_LIMITS = [16, 17, 18, 19, 20];

/** A batched POST of BATCH_LIMITS list queries; each result must be its list, without errors. */
function batchOfLists(): RequestSpec {
  return {
    method: 'POST',
    path: '',
    body: JSON.stringify(BATCH_LIMITS.map((limit) => ({ query: `{ pets(limit: ${limit}) { ${FIELDS} } }` }))),
    check(status, text) {
      if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
      const results = JSON.parse(text) as Array<{ data?: unknown; errors?: unknown }>;
      if (!Array.isArray(results) || results.length !== BATCH_LIMITS.length)
        return `expected ${BATCH_LIMITS.length} results, got ${text.slice(0, 200)}`;
      for (const [i, result] of results.entries()) {
        if (result.errors !== undefined)
          return `GraphQL errors: ${JSON.stringify(result.errors).slice(0, 300)}`;
        const problem = dataField('pets', petList(BATCH_LIMITS[i] as number))(result.data);
        if (problem) return problem;
      }
      return undefined;
    },
  };
}

// Unique per bench process, and the token per request: no document text is ever seen twice.
const RUN_TAG = Date.now().toString(36);

/** Every workload, in the order they run. */
export const WORKLOADS: readonly Workload[] = [
  listWorkload('list20', 20, 'static', { tailcall: true, hiveMesh: true, workers: true }),
  listWorkload('list20-steady', 20, 'static', { steady: STEADY }),
  listWorkload('list100', 100, 'static', { tailcall: true, hiveMesh: true }),
  {
    name: 'dedup',
    title: `10 aliased pet(id) over ${DEDUP_IDS.length} distinct ids in one operation  ≙  ${DEDUP_IDS.length} × GET /v1/pets/{id}`,
    upstream: 'static',
    targets: {
      ...gateways(
        graphql(DEDUP_QUERY, (data) =>
          Object.keys(data ?? {}).length === 10 && Object.values(data ?? {}).every(isPet)
            ? undefined
            : `expected 10 pets, got ${JSON.stringify(data).slice(0, 200)}`,
        ),
      ),
      'bare-proxy': rest(
        'GET',
        `/pets-by-ids?ids=${DEDUP_IDS.join(',')}`,
        restCheck(200, petList(DEDUP_IDS.length)),
      ),
    },
    baselineNote: `bare-proxy makes the same ${DEDUP_IDS.length} upstream GETs in parallel per request; no single direct REST request is equivalent`,
  },
  {
    name: 'create-pet',
    title: 'mutation { createPet(input: {…}) { … } }  ≙  POST /v1/pets (static 201)',
    upstream: 'static',
    targets: {
      ...gateways(graphql(CREATE_MUTATION, dataField('createPet', createdPet))),
      'bare-proxy': rest('POST', '/pets', restCheck(201, createdPet), CREATE_INPUT),
      'json-hop': rest('POST', '/pets', envelopeCheck(dataField('createPet', createdPet)), CREATE_INPUT),
      direct: rest('POST', '/pets', restCheck(201, createdPet), CREATE_INPUT),
    },
  },
  {
    name: 'cold',
    title: 'list20 with a new alias per request (new document text: parse + validate every time)',
    upstream: 'static',
    targets: {
      ...gateways(
        graphql(`{ cold_${RUN_TAG}_${TOKEN}: pets(limit: 20) { ${FIELDS} } }`, (data) =>
          petList(20)(Object.values(data ?? {})[0]),
        ),
      ),
      'bare-proxy': rest('GET', '/pets?limit=20', restCheck(200, petList(20))),
    },
    baselineNote: 'bare-proxy forwards GET /pets?limit=20 (the REST call behind every cold document)',
  },
  listWorkload('list20-bigids', 20, 'static-bigids', {
    direct: false,
    tailcall: true,
    hiveMesh: true,
    titleNote: ', every id and categoryId a 19-digit int64 beyond 2^53 (returned exactly, as strings)',
  }),
  listWorkload('list20-reference', 20, 'reference'),
  {
    name: 'batch5',
    title: `five list queries (limits ${BATCH_LIMITS.join(', ')}) in one batched POST  ≙  ${BATCH_LIMITS.length} × GET /v1/pets`,
    upstream: 'static',
    targets: {
      ...gateways(batchOfLists()),
      'bare-proxy': rest('GET', '/pets?limit=20', restCheck(200, petList(20))),
    },
    baselineNote: `one batched request is ${BATCH_LIMITS.length} operations and ${BATCH_LIMITS.length} upstream GETs; bare-proxy forwards one GET /pets?limit=20, so compare the gateway's CPU per batch with ${BATCH_LIMITS.length} × its list20 CPU`,
  },
];
