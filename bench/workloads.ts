import { CREATED_PET_ID } from './static-upstream.ts';

export type TargetKind = 'gateway' | 'bare-proxy' | 'direct';
export type UpstreamKind = 'static' | 'reference';

/** One HTTP request shape, sent to a target's announced URL + `path`. */
export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  /** A fixed body, or one per request (`n` counts up across the whole run). */
  body?: string | ((n: number) => string);
  /** Returns what is wrong with an answer, or undefined when it is the expected one. */
  check(status: number, body: string): string | undefined;
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

const FIELDS = 'id name categoryId status';

function graphql(query: string | ((n: number) => string), check: (data: unknown) => string | undefined) {
  return {
    method: 'POST',
    path: '',
    body:
      typeof query === 'string'
        ? JSON.stringify({ query })
        : (n: number) => JSON.stringify({ query: query(n) }),
    check(status: number, text: string) {
      if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
      const result = JSON.parse(text) as { data?: unknown; errors?: unknown };
      if (result.errors !== undefined)
        return `GraphQL errors: ${JSON.stringify(result.errors).slice(0, 300)}`;
      return check(result.data);
    },
  } satisfies RequestSpec;
}

function rest(
  method: 'GET' | 'POST',
  path: string,
  expectedStatus: number,
  check: (body: unknown) => string | undefined,
  body?: string,
) {
  return {
    method,
    path,
    ...(body === undefined ? {} : { body }),
    check(status: number, text: string) {
      if (status !== expectedStatus) return `status ${status}: ${text.slice(0, 300)}`;
      return check(JSON.parse(text));
    },
  } satisfies RequestSpec;
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
  steady?: { rate: number; connections: number },
): Workload {
  return {
    name,
    ...steady,
    title: `{ pets(limit: ${limit}) { ${FIELDS} } }  ≙  GET /v1/pets?limit=${limit}${steady ? `, a steady ${steady.rate} req/s over ${steady.connections} connections` : ''}`,
    upstream,
    targets: {
      gateway: graphql(`{ pets(limit: ${limit}) { ${FIELDS} } }`, dataField('pets', petList(limit))),
      'bare-proxy': rest('GET', `/pets?limit=${limit}`, 200, petList(limit)),
      direct: rest('GET', `/pets?limit=${limit}`, 200, petList(limit)),
    },
  };
}

const DEDUP_IDS = ['1', '2', '3', '4', '5'];
const DEDUP_QUERY = `{ ${Array.from({ length: 10 }, (_, i) => `p${i}: pet(id: "${DEDUP_IDS[i % DEDUP_IDS.length]}") { ${FIELDS} }`).join(' ')} }`;

const CREATE_INPUT = { name: 'Bench', categoryId: 1, status: 'available' };
const CREATE_MUTATION = `mutation { createPet(input: { name: "Bench", categoryId: "1", status: AVAILABLE }) { ${FIELDS} } }`;
const createdPet = (value: unknown) =>
  isPet(value) && String((value as { id: unknown }).id) === String(CREATED_PET_ID)
    ? undefined
    : `expected pet ${CREATED_PET_ID}, got ${JSON.stringify(value).slice(0, 200)}`;

// Unique per bench process and per request: no document text is ever seen twice by the gateway.
const RUN_TAG = Date.now().toString(36);

/** Every workload, in the order they run. */
export const WORKLOADS: readonly Workload[] = [
  listWorkload('list20', 20, 'static'),
  listWorkload('list20-steady', 20, 'static', STEADY),
  listWorkload('list100', 100, 'static'),
  {
    name: 'dedup',
    title: `10 aliased pet(id) over ${DEDUP_IDS.length} distinct ids in one operation  ≙  ${DEDUP_IDS.length} × GET /v1/pets/{id}`,
    upstream: 'static',
    targets: {
      gateway: graphql(DEDUP_QUERY, (data) =>
        Object.keys(data ?? {}).length === 10 && Object.values(data ?? {}).every(isPet)
          ? undefined
          : `expected 10 pets, got ${JSON.stringify(data).slice(0, 200)}`,
      ),
      'bare-proxy': rest('GET', `/pets-by-ids?ids=${DEDUP_IDS.join(',')}`, 200, petList(DEDUP_IDS.length)),
    },
    baselineNote: `bare-proxy makes the same ${DEDUP_IDS.length} upstream GETs in parallel per request; no single direct REST request is equivalent`,
  },
  {
    name: 'create-pet',
    title: 'mutation { createPet(input: {…}) { … } }  ≙  POST /v1/pets (static 201)',
    upstream: 'static',
    targets: {
      gateway: graphql(CREATE_MUTATION, dataField('createPet', createdPet)),
      'bare-proxy': rest('POST', '/pets', 201, createdPet, JSON.stringify(CREATE_INPUT)),
      direct: rest('POST', '/pets', 201, createdPet, JSON.stringify(CREATE_INPUT)),
    },
  },
  {
    name: 'cold',
    title: 'list20 with a new alias per request (new document text: parse + validate every time)',
    upstream: 'static',
    targets: {
      gateway: graphql(
        (n) => `{ cold_${RUN_TAG}_${n}: pets(limit: 20) { ${FIELDS} } }`,
        (data) => petList(20)(Object.values(data ?? {})[0]),
      ),
      'bare-proxy': rest('GET', '/pets?limit=20', 200, petList(20)),
    },
    baselineNote: 'bare-proxy forwards GET /pets?limit=20 (the REST call behind every cold document)',
  },
  listWorkload('list20-reference', 20, 'reference'),
];
