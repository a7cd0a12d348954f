import { expect } from 'vitest';
import { post } from './graphql.ts';

// The two ways a watched list changes, as live tests make them.

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
