import { BIG_ID, type FakeUpstream } from '../support/fake-upstream.ts';
import { type Case, DOCUMENT_ID, TOKEN } from './sides.ts';

// What a request carries, each sent alike to every side: fields, variables and ids past 2^53, the
// upstream's own headers, client names, a mutation, a persisted id, Accept, Origin, Accept-Encoding
// and Authorization.

/** The upstream's answer for pet 2 with `extra` headers, once. */
const headersFault = (extra: Record<string, string>) => (upstream: FakeUpstream) =>
  upstream.fault(
    /^\/v1\/pets\/2$/,
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...extra });
      res.end('{"id":2,"name":"Tom","categoryId":1,"status":"sold"}');
    },
    1,
  );

export const requestCases: Case[] = [
  { name: 'a list with every field', body: { query: '{ pets(limit: 20) { id name categoryId status } }' } },
  {
    name: 'aliases, __typename, a status filter and an operation name',
    body: {
      query: 'query Sold { a: pets(status: SOLD, limit: 2) { __typename id } b: pets(limit: 1) { n: name } }',
    },
  },
  {
    name: 'variables, an id beyond 2^53 and the deprecated pet(id)',
    body: {
      query:
        'query Both($limit: Int, $id: ID!) { pets(limit: $limit) { id } pet(id: $id) { name categoryId } }',
      variables: { limit: 3, id: BIG_ID },
    },
  },
  {
    name: "the upstream's own Deprecation and Sunset carried over",
    body: { query: 'query One($id: ID!) { pet(id: $id) { id name status } }', variables: { id: '2' } },
    setup: headersFault({ deprecation: '@1700000000', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' }),
  },
  {
    name: 'a client name and version on a deprecated field (log and metric)',
    body: { query: '{ pet(id: "3") { name } }' },
    headers: { 'graphql-client-name': 'ios-app', 'graphql-client-version': '4.2.0' },
  },
  {
    name: 'createPet, sent exactly once per request',
    body: {
      query: 'mutation Add($input: NewPetInput!) { createPet(input: $input) { name categoryId status } }',
      variables: { input: { name: 'Kit', categoryId: '9223372036854775807', status: 'PENDING' } },
    },
  },
  { name: 'a persisted documentId', body: { documentId: DOCUMENT_ID } },
  {
    name: 'Accept: application/graphql-response+json',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { accept: 'application/graphql-response+json' },
  },
  {
    name: 'Accept: a client list (graphql-response+json, application/json)',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { accept: 'application/graphql-response+json, application/json' },
  },
  { name: 'Accept: */*', body: { query: '{ pets(limit: 1) { id } }' }, headers: { accept: '*/*' } },
  {
    name: 'a browser Origin (CORS headers)',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { origin: 'https://app.example', accept: 'application/json' },
  },
  {
    name: 'Accept-Encoding: gzip on an answer over the threshold (compressed)',
    body: {
      query: `{ ${Array.from({ length: 8 }, (_, i) => `a${i}: pets(limit: 20) { ...P }`).join(' ')} } fragment P on Pet { id name categoryId status }`,
    },
    headers: { 'accept-encoding': 'gzip' },
  },
  {
    name: 'Accept-Encoding: br, gzip (brotli chosen)',
    body: {
      query: `{ ${Array.from({ length: 8 }, (_, i) => `b${i}: pets(limit: 20) { ...P }`).join(' ')} } fragment P on Pet { id name categoryId status }`,
    },
    headers: { 'accept-encoding': 'br, gzip' },
  },
  {
    name: 'Accept-Encoding on a small answer (sent as it is)',
    body: { query: '{ pets(limit: 1) { name } }' },
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  },
  {
    name: 'Authorization with a lowercase scheme (forwarded as Bearer)',
    body: { query: '{ pets(limit: 2) { name status } }' },
    headers: { authorization: `bearer ${TOKEN}` },
  },
];
