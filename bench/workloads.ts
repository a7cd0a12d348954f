/** The workloads: what each target is asked, and how its answer is checked before the load. */
import { createdPetId, listedPets, type PetIds } from './static-upstream.ts';

export type TargetKind =
  | 'gateway'
  | 'gateway-yoga'
  | 'gateway-warn'
  | 'gateway-workers'
  | 'gateway-baseline'
  | 'bare-proxy'
  | 'json-hop'
  | 'tailcall'
  | 'hive-mesh'
  | 'direct';
/** Targets that sit between the load and the upstream, each in its own process. */
export type HopKind = Exclude<TargetKind, 'direct'>;
/** `static-bigids` is the static upstream serving int64 ids beyond 2^53. */
export type UpstreamKind = 'static' | 'static-bigids' | 'reference';

/**
 * The bearer keys a run's requests take in turn, one per caller of a crowd: every upstream accepts
 * each and the hops forward each caller's own, so nothing keyed by caller can merge two callers.
 */
export function apiKeys(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `bench-key-${i}`);
}

/** One HTTP request shape, sent to a target's announced URL + `path`. */
export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  /** A counted body is `before + token + after`, the token unique per request: strings, so wrk's Lua builds it too. */
  body?: string | { before: string; after: string };
  /** What is wrong with an answer; undefined when it is the expected one. */
  check(status: number, body: string): string | undefined;
}

export function headersOf(spec: RequestSpec, key: string): Record<string, string> {
  const authorization = `Bearer ${key}`;
  return spec.body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' };
}

/** A spec's body for one request; `token` (letters, digits, `_`) must be unique to it when counted. */
export function bodyText(spec: RequestSpec, token: string): string | undefined {
  const { body } = spec;
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
   * A fixed offered load (req/s over all connections): at saturation every target's latency is
   * connections ÷ throughput (Little's law), so only a fixed rate shows what a hop adds to a request.
   */
  rate?: number;
  /** Instead of --connections (a steady rate wants few). */
  connections?: number;
}

export function petIdsOf(kind: UpstreamKind): PetIds | undefined {
  return kind === 'static' ? 'small' : kind === 'static-bigids' ? 'int64' : undefined;
}

type Check = (value: unknown) => string | undefined;
const clip = (value: unknown) => JSON.stringify(value)?.slice(0, 200);

/** An answer with `status`, its parsed body read by `check`, its raw text by `exact` (an int64 survives only there). */
function answer(status: number, check: Check, exact?: (text: string) => string | undefined) {
  return (got: number, text: string) =>
    got !== status ? `status ${got}: ${text.slice(0, 300)}` : (check(JSON.parse(text)) ?? exact?.(text));
}

/** A GraphQL result's `data` read by `check`, unless it carries errors. */
const result =
  (check: Check): Check =>
  (value) => {
    const { data, errors } = value as { data?: unknown; errors?: unknown };
    return errors === undefined ? check(data) : `GraphQL errors: ${clip(errors)}`;
  };

const field =
  (name: string, check: Check): Check =>
  (data) =>
    check((data as Record<string, unknown> | null)?.[name]);

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

const petList =
  (count: number): Check =>
  (value) =>
    Array.isArray(value) && value.length === count && value.every(isPet)
      ? undefined
      : `expected ${count} pets, got ${clip(value)}`;

/** The listed pets' ids and category ids exactly as the static upstream sent them, read from the text. */
function sameIds(expected: ReadonlyArray<{ id: string; categoryId: string }>) {
  return (text: string) => {
    const got = { id: [] as string[], categoryId: [] as string[] };
    JSON.parse(text, (key, value, context?: { source?: string }) => {
      if (key === 'id' || key === 'categoryId') {
        got[key].push(typeof value === 'number' ? (context?.source ?? String(value)) : String(value));
      }
      return value;
    });
    for (const key of ['id', 'categoryId'] as const) {
      if (got[key].join(',') !== expected.map((p) => p[key]).join(',')) {
        return `${key === 'id' ? 'ids' : 'category ids'} differ from the upstream's: ${got[key].slice(0, 3).join(', ')}…`;
      }
    }
    return undefined;
  };
}

/** Stands for the per-request token in a query's text; survives JSON.stringify unchanged. */
const TOKEN = '__TOKEN__';

/** A GraphQL POST whose answer's data `check` reads; a query containing TOKEN becomes a counted body. */
function graphql(query: string, check: Check, exact?: (text: string) => string | undefined): RequestSpec {
  const text = JSON.stringify({ query });
  const [before = '', after] = text.split(TOKEN);
  return {
    method: 'POST',
    path: '',
    body: after === undefined ? text : { before, after },
    check: answer(200, result(check), exact),
  };
}

function rest(method: 'GET' | 'POST', path: string, check: RequestSpec['check'], body?: string): RequestSpec {
  return { method, path, ...(body === undefined ? {} : { body }), check };
}

/** The same spec for both gateway processes: fast lane on (the default) and off. */
const gateways = (spec: RequestSpec) => ({ gateway: spec, 'gateway-yoga': spec });

const FIELDS = 'id name categoryId status';

/**
 * Well below every target's capacity on the 2-core machine the figures come from, over few
 * connections: autocannon paces each connection on its own timer, so 50 would arrive as bursts.
 */
const STEADY = { rate: 1000, connections: 4 };

function listWorkload(
  name: string,
  limit: number,
  upstream: UpstreamKind,
  options: {
    steady?: { rate: number; connections: number };
    direct?: boolean;
    /** Tailcall and the `warn` gateway beside it answer the same query. */
    tailcall?: boolean;
    /** Hive Gateway + Mesh answers it under its own names, checked as the gateway's answer. */
    hiveMesh?: boolean;
    workers?: boolean;
    titleNote?: string;
  } = {},
): Workload {
  const { steady, direct = true } = options;
  const ids = petIdsOf(upstream);
  // On a static upstream every id is known: each target must return them exactly.
  const exact = ids === undefined ? undefined : sameIds(listedPets(ids, limit));
  const pets = field('pets', petList(limit));
  const query = graphql(`{ pets(limit: ${limit}) { ${FIELDS} } }`, pets, exact);
  const restList = rest('GET', `/pets?limit=${limit}`, answer(200, petList(limit), exact));
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
      'json-hop': rest('GET', `/pets?limit=${limit}`, answer(200, result(pets), exact)),
      ...(options.tailcall ? { tailcall: query, 'gateway-warn': query } : {}),
      // Mesh names the field after the operationId, each item a union of Pet and the error bodies;
      // the alias keeps the gateway's shape.
      ...(options.hiveMesh
        ? {
            'hive-mesh': graphql(
              `{ pets: listPets(limit: ${limit}) { ... on Pet { ${FIELDS} } } }`,
              pets,
              exact,
            ),
          }
        : {}),
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
const createdPet: Check = (value) =>
  isPet(value) && String((value as { id: unknown }).id) === CREATED_PET_ID
    ? undefined
    : `expected pet ${CREATED_PET_ID}, got ${clip(value)}`;

/** Distinct limits, so five upstream calls. */
const BATCH_LIMITS = [16, 17, 18, 19, 20];
const BATCH = JSON.stringify(
  BATCH_LIMITS.map((limit) => ({ query: `{ pets(limit: ${limit}) { ${FIELDS} } }` })),
);
const batchResults: Check = (results) =>
  Array.isArray(results) && results.length === BATCH_LIMITS.length
    ? results.map((r, i) => result(field('pets', petList(BATCH_LIMITS[i] as number)))(r)).find(Boolean)
    : `expected ${BATCH_LIMITS.length} results, got ${clip(results)}`;

// Unique per bench process, and the token per request: no document text is ever seen twice.
const RUN_TAG = Date.now().toString(36);
const list20 = rest('GET', '/pets?limit=20', answer(200, petList(20)));

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
            : `expected 10 pets, got ${clip(data)}`,
        ),
      ),
      'bare-proxy': rest(
        'GET',
        `/pets-by-ids?ids=${DEDUP_IDS.join(',')}`,
        answer(200, petList(DEDUP_IDS.length)),
      ),
    },
    baselineNote: `bare-proxy makes the same ${DEDUP_IDS.length} upstream GETs in parallel per request; no single direct REST request is equivalent`,
  },
  {
    name: 'create-pet',
    title: 'mutation { createPet(input: {…}) { … } }  ≙  POST /v1/pets (static 201)',
    upstream: 'static',
    targets: {
      ...gateways(graphql(CREATE_MUTATION, field('createPet', createdPet))),
      'bare-proxy': rest('POST', '/pets', answer(201, createdPet), CREATE_INPUT),
      'json-hop': rest('POST', '/pets', answer(200, result(field('createPet', createdPet))), CREATE_INPUT),
      direct: rest('POST', '/pets', answer(201, createdPet), CREATE_INPUT),
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
      'bare-proxy': list20,
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
      ...gateways({ method: 'POST', path: '', body: BATCH, check: answer(200, batchResults) }),
      'bare-proxy': list20,
    },
    baselineNote: `one batched request is ${BATCH_LIMITS.length} operations and ${BATCH_LIMITS.length} upstream GETs; bare-proxy forwards one GET /pets?limit=20, so compare the gateway's CPU per batch with ${BATCH_LIMITS.length} × its list20 CPU`,
  },
];
