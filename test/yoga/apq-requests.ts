import { createHash } from 'node:crypto';
import { type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { post as postTo } from '../support/graphql.ts';

// Requests as an APQ client sends them (a document's SHA-256 in extensions.persistedQuery, over POST
// or GET) and their answers, for the files that hold the gateway's automatic persisted queries.

const TOKEN = 'apq-token';
export const AUTH = `Bearer ${TOKEN}`;
export const MANIFEST = new URL('../generated/persisted-documents.json', import.meta.url).pathname;
export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
export const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

/** The fake upstream the gateways call, with the token the requests carry and the seeded pets. */
export async function startApqUpstream(): Promise<FakeUpstream> {
  const upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
  return upstream;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: {
    data?: unknown;
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
  };
}

export const post = (gateway: RunningGateway, body: unknown, accept = 'application/json'): Promise<Answer> =>
  postTo(gateway.url, body, { authorization: AUTH, accept });

export async function get(
  gateway: RunningGateway,
  params: Record<string, unknown>,
  accept = 'application/json',
): Promise<Answer> {
  const search = new URLSearchParams(
    Object.entries(params).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : JSON.stringify(value),
    ]),
  );
  const response = await fetch(`${gateway.url}?${search}`, { headers: { accept, authorization: AUTH } });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** The first error's code. */
export const code = (answer: Answer) => answer.body.errors?.[0]?.extensions?.code;
