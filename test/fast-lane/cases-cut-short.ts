import { renamedDocument } from './renamed.ts';
import type { Body, Case } from './sides.ts';

// One request per path a query can take, each cut short by lanes-cut-short.test.ts: its client gone
// while the upstream is slow, then its deadline passed. Each asks for lists of its own, so no call
// is shared with another case's.

/** A request and the path the defaults' fast lane serves it by. */
export interface CutShort extends Pick<Case, 'name' | 'body' | 'warm'> {
  /** The `GET /pets` it makes, on every side. */
  calls: number;
  /** The fast lane hands it to Yoga before any call (never prepared). @default false */
  yogaOnly?: boolean;
  /** The fast lane serves it on the one-call path (fast-lane/one-call.ts). @default false */
  oneCall?: boolean;
}

const PLAN = 'query Plan { a: pets(limit: 23) { id } b: pets(status: SOLD, limit: 24) { name } }';
const BATCH = [
  { query: 'query B1 { first: pets(limit: 25) { id } }' },
  { query: 'query B2 { second: pets(limit: 26) { name } }' },
];

/** The same request with every text renamed (renamed.ts): a text seen for the first time. */
function renamed(body: Body): Body {
  const rename = (entry: Record<string, unknown>) => ({
    ...entry,
    query: renamedDocument(entry.query as string),
  });
  return Array.isArray(body) ? body.map(rename) : rename(body);
}

export const cutShortCases: CutShort[] = [
  {
    name: "Yoga's lane (a condition: never prepared)",
    body: {
      query: 'query Kept($on: Boolean!) { pets(limit: 21) { id name @include(if: $on) } }',
      variables: { on: true },
    },
    calls: 1,
    yogaOnly: true,
  },
  {
    name: 'the one-call path',
    body: { query: 'query One { pets(limit: 22) { id } }' },
    calls: 1,
    oneCall: true,
  },
  { name: 'a plan', body: { query: PLAN }, calls: 2 },
  { name: "a batch's one-call path", body: BATCH, calls: 2, oneCall: true },
  {
    name: 'a batch on shared loaders (the same list twice)',
    body: [
      { query: 'query S1 { pets(limit: 27) { id } }' },
      { query: 'query S2 { pets(limit: 27) { name } }' },
    ],
    calls: 1,
  },
  { name: 'a text found by its shape', warm: { query: PLAN }, body: renamed({ query: PLAN }), calls: 2 },
  { name: 'a batch of texts found by their shapes', warm: BATCH, body: renamed(BATCH), calls: 2 },
];
