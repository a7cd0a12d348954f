import { expect } from 'vitest';
import type { FakeUpstream } from './fake-upstream.ts';
import { post } from './graphql.ts';
import type { SseSubscription } from './sse.ts';

// What live tests share: the two ways a watched list changes, and what they read of it.

/** The pets' names of one event of a live list or a live query of `pets`. */
export const petNames = (event: SseSubscription['events'][number] | undefined): string[] =>
  ((event?.data as { pets?: Array<{ name: string }> } | undefined)?.pets ?? []).map((pet) => pet.name);

/** The `GET /pets` calls the upstream has had with `key`: one per poll of a list. */
export const listCallsOf = (upstream: FakeUpstream, key: string): number =>
  upstream.requests.filter(
    (request) =>
      request.method === 'GET' &&
      request.path.startsWith('/v1/pets?') &&
      request.authorization === `Bearer ${key}`,
  ).length;

/** Creates a pet through the gateway: the caller's watches are asked again at once. */
export async function createThroughGateway(graphqlUrl: string, key: string, name: string): Promise<void> {
  const answer = await post(
    graphqlUrl,
    { query: `mutation { createPet(input: { name: "${name}", categoryId: "1" }) { id } }` },
    { authorization: `Bearer ${key}` },
  );
  expect(answer.status).toBe(200);
  expect(answer.body).not.toHaveProperty('errors');
}

/** Posts a pet straight to the REST service, as another client of it would: seen by the next poll. */
export async function postToRest(upstreamUrl: string, key: string, name: string): Promise<void> {
  const response = await fetch(`${upstreamUrl}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ name, categoryId: 1 }),
  });
  expect(response.status).toBe(201);
}
