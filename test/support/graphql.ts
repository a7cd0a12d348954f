import { type ClientRequest, request as httpRequest } from 'node:http';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';

export interface GraphQLResponse<TData> {
  status: number;
  data?: TData | null;
  errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> }>;
  /** The raw body text, for leak checks. */
  text: string;
}

/** Posts a typed operation over real HTTP, as a GraphQL client would, and returns the whole answer. */
export async function execute<TData, TVariables>(
  url: string,
  document: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
  authorization?: string,
): Promise<GraphQLResponse<TData>> {
  return postJson(url, { query: print(document), variables }, authorization);
}

/** What a GraphQL endpoint answered to a POST: status, headers, the body's text and its JSON. */
export interface PostAnswer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: an answer's JSON, read by each test as it expects
  body: any;
}

/**
 * POSTs a JSON body to a GraphQL endpoint, as a GraphQL client would (`Accept` asks for the GraphQL
 * response media type first, unless given), with the caller's `Authorization` when given. The one
 * HTTP POST of the tests that talk GraphQL.
 */
export async function post(
  url: string,
  body: unknown,
  options: { authorization?: string | undefined; accept?: string; headers?: Record<string, string> } = {},
): Promise<PostAnswer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: options.accept ?? 'application/graphql-response+json, application/json',
    ...options.headers,
  };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  return readAnswer(response);
}

/** Posts any JSON body (for untyped or malformed operations); the answer's fields spread. */
export async function postJson<TData = unknown>(
  url: string,
  body: unknown,
  authorization?: string,
): Promise<GraphQLResponse<TData>> {
  const answer = await post(url, body, { authorization });
  return { status: answer.status, text: answer.text, ...JSON.parse(answer.text) };
}

/** A response as tests read it: status, headers, the text, and the JSON body when it is JSON. */
export async function readAnswer(
  response: Response,
): Promise<{ status: number; headers: Headers; text: string; body: unknown }> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/**
 * A POST to a GraphQL endpoint over a connection of its own (no agent), as a client that may hang
 * up at any point does: the test holds the request and may destroy its socket.
 */
export function postOnOwnConnection(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): ClientRequest {
  const text = JSON.stringify(body);
  const target = new URL(url);
  const req = httpRequest({
    host: target.hostname,
    port: target.port,
    path: target.pathname,
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
  });
  req.on('error', () => {});
  req.end(text);
  return req;
}
