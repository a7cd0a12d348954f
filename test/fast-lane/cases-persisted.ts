import { APQ_ADD, APQ_LIST, APQ_PET, type Case, DOCUMENT_ID, persistedQuery, sha256 } from './sides.ts';

// Documents sent by hash or id (automatic persisted queries, the manifest), over GET, and with
// extensions, each sent alike to every side.

export const persistedCases: Case[] = [
  {
    name: 'an APQ hash alone, registered before',
    register: { query: APQ_LIST, variables: { limit: 1 }, extensions: persistedQuery(sha256(APQ_LIST)) },
    body: { variables: { limit: 3 }, extensions: persistedQuery(sha256(APQ_LIST)) },
  },
  {
    name: 'an APQ hash alone, with Apollo Client 4’s clientLibrary extension',
    register: { query: APQ_LIST, extensions: persistedQuery(sha256(APQ_LIST)) },
    body: {
      operationName: 'ApqList',
      variables: { limit: 2 },
      extensions: {
        ...persistedQuery(sha256(APQ_LIST)),
        clientLibrary: { name: '@apollo/client', version: '4.3.8' },
      },
    },
  },
  {
    name: 'an APQ mutation by hash (no-store), sent once',
    register: { query: APQ_ADD, variables: { name: 'Reg' }, extensions: persistedQuery(sha256(APQ_ADD)) },
    body: { variables: { name: 'Hashed' }, extensions: persistedQuery(sha256(APQ_ADD)) },
  },
  {
    name: 'a manifest document by its bare hash (extensions.persistedQuery)',
    body: { extensions: persistedQuery('lanes-list') },
  },
  {
    name: 'an APQ hash whose document then meets an upstream 404',
    code: 'PET_NOT_FOUND',
    register: { query: APQ_PET, variables: { id: '2' }, extensions: persistedQuery(sha256(APQ_PET)) },
    warm: { variables: { id: '2' }, extensions: persistedQuery(sha256(APQ_PET)) },
    body: { variables: { id: '404' }, extensions: persistedQuery(sha256(APQ_PET)) },
  },
  {
    name: 'an unknown APQ hash (PersistedQueryNotFound)',
    code: 'PERSISTED_QUERY_NOT_FOUND',
    body: { extensions: persistedQuery(sha256('{ never { registered } }')) },
    yogaOnly: true,
  },
  {
    name: 'an APQ hash beside text it is not the SHA-256 of',
    code: 'PERSISTED_QUERY_HASH_MISMATCH',
    body: { query: '{ pets(limit: 1) { id } }', extensions: persistedQuery(sha256('{ other }')) },
    yogaOnly: true,
  },
  {
    name: 'GET: a query by its text',
    method: 'GET',
    body: { query: 'query Got($limit: Int) { pets(limit: $limit) { id name } }', variables: { limit: 3 } },
  },
  {
    name: 'GET: an APQ hash alone (useGETForHashedQueries, urql)',
    method: 'GET',
    register: { query: APQ_LIST, extensions: persistedQuery(sha256(APQ_LIST)) },
    body: { variables: { limit: 4 }, extensions: persistedQuery(sha256(APQ_LIST)) },
  },
  {
    name: 'GET: a persisted documentId, with Accept-Encoding and an Origin',
    method: 'GET',
    body: { documentId: DOCUMENT_ID },
    headers: { 'accept-encoding': 'gzip', origin: 'https://app.example' },
  },
  {
    name: 'GET: a query whose result has an error (executed once, answered by Yoga)',
    method: 'GET',
    code: 'PET_NOT_FOUND',
    warm: { query: 'query GotPet($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query GotPet($id: ID!) { pet(id: $id) { id } }', variables: { id: '404' } },
  },
  {
    name: 'GET: a mutation prepared over POST, sent by hash over GET (405, never run)',
    method: 'GET',
    code: 'METHOD_NOT_ALLOWED',
    register: { query: APQ_ADD, variables: { name: 'ByPost' }, extensions: persistedQuery(sha256(APQ_ADD)) },
    body: { variables: { name: 'ByGet' }, extensions: persistedQuery(sha256(APQ_ADD)) },
    yogaOnly: true,
  },
  {
    name: 'extensions in the body (Yoga reads them)',
    body: { query: '{ pets(limit: 1) { name } }', extensions: { anything: true } },
    yogaOnly: true,
  },
];
