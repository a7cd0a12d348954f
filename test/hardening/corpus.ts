import { gzipSync } from 'node:zlib';
/**
 * The hostile-request corpus: each case is one request an attacker (or a broken client) could send,
 * with the documented code and HTTP status the gateway must answer it with. Variants are generated
 * (sizes, positions, shapes) so every class is exercised at and well past its limit.
 *
 * Every GraphQL-level case carries a valid bearer key for the fake upstream: if a limit let the
 * operation through, the upstream's request log would show it.
 */

/** Registered in the fake upstream; never in any answer. */
export const CORPUS_TOKEN = 'corpus-token-8d1f0c2e';
export const CORPUS_AUTH = `Bearer ${CORPUS_TOKEN}`;
/** Placed in malformed bodies: an error that echoed request bytes would contain it. */
export const ECHO_MARKER = 'ECHO-MARKER-5b7e91';

export type HostileClass =
  | 'depth'
  | 'aliases'
  | 'duplicate fields'
  | 'directives'
  | 'token count'
  | 'fragment fan-out and cycles'
  | 'deep introspection'
  | 'batching'
  | 'body cap'
  | 'malformed HTTP'
  | 'malformed JSON and encodings'
  | 'content types'
  | 'accept'
  | 'mutations over GET'
  | 'argument abuse'
  | 'auth abuse';

/** A well-formed HTTP request, sent with fetch over a keep-alive connection. */
export interface FetchSend {
  kind: 'fetch';
  method: 'GET' | 'POST';
  /** Query string for GET, without `?`. */
  search?: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** Bytes written to a fresh TCP connection (what fetch refuses to send), or a body streamed in chunks. */
export interface RawSend {
  kind: 'raw';
  /** Request head (and maybe body), written first. `{path}` is replaced by the endpoint's path. */
  head: string | Uint8Array;
  /** Body bytes written after the head in 16 KB slices, stopping once the server has answered. */
  body?: Uint8Array;
}

export interface HostileCase {
  name: string;
  class: HostileClass;
  send: FetchSend | RawSend;
  code: string;
  status: number;
  /** Request bytes that must never come back in the answer. */
  secret?: string;
  /** A bug outside the files this suite may fix: the case is expected to fail until it is fixed. */
  knownBug?: string;
}

const ACCEPT = 'application/graphql-response+json, application/json';
const JSON_HEADERS = { 'content-type': 'application/json', accept: ACCEPT };

const STATUS: Record<string, number> = {
  DEPTH_LIMIT_EXCEEDED: 400,
  ALIAS_LIMIT_EXCEEDED: 400,
  DIRECTIVE_LIMIT_EXCEEDED: 400,
  TOKEN_LIMIT_EXCEEDED: 400,
  COST_LIMIT_EXCEEDED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  GRAPHQL_PARSE_FAILED: 400,
  BAD_REQUEST: 400,
  BAD_USER_INPUT: 200,
  UNAUTHENTICATED: 200,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  NOT_ACCEPTABLE: 406,
  HEADERS_TOO_LARGE: 431,
};

function statusOf(code: string): number {
  const status = STATUS[code];
  if (status === undefined) throw new Error(`no status for ${code}`);
  return status;
}

function post(body: unknown, headers: Record<string, string> = {}): FetchSend {
  return {
    kind: 'fetch',
    method: 'POST',
    headers: { ...JSON_HEADERS, authorization: CORPUS_AUTH, ...headers },
    body: JSON.stringify(body),
  };
}

function postText(body: string | Uint8Array, headers: Record<string, string> = {}): FetchSend {
  return {
    kind: 'fetch',
    method: 'POST',
    headers: { ...JSON_HEADERS, authorization: CORPUS_AUTH, ...headers },
    body,
  };
}

function gql(query: string, variables?: Record<string, unknown>): FetchSend {
  return post(variables === undefined ? { query } : { query, variables });
}

function get(params: Record<string, string>): FetchSend {
  return {
    kind: 'fetch',
    method: 'GET',
    search: new URLSearchParams(params).toString(),
    headers: { accept: ACCEPT, authorization: CORPUS_AUTH },
  };
}

function raw(lines: string[], body = ''): RawSend {
  return { kind: 'raw', head: `${lines.join('\r\n')}\r\n\r\n${body}` };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const repeat = (n: number, f: (i: number) => string, sep = ' ') =>
  range(0, n - 1)
    .map(f)
    .join(sep);
const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

/** `ofType { ofType { … name … } }`, n levels. */
function ofTypes(n: number): string {
  return `${'ofType { '.repeat(n)}name${' }'.repeat(n)}`;
}

function depthCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend) =>
    cases.push({ name, class: 'depth', send, code: 'DEPTH_LIMIT_EXCEEDED', status: 400 });
  // An operation that is not pure introspection gets the limit of 5, whatever part is deep.
  for (const k of range(2, 11)) {
    const deep = `__type(name: "Pet") { fields { type { ${ofTypes(k)} } } }`;
    add(`pets beside __type nested to depth ${k + 4}`, gql(`{ pets(limit: 1) { id } ${deep} }`));
    add(`pet beside __type nested to depth ${k + 4}`, gql(`{ pet(id: "1") { id } ${deep} }`));
    add(
      `depth ${k + 4} hidden in a fragment on Query`,
      gql(`{ pets(limit: 1) { id } ...Deep } fragment Deep on Query { ${deep} }`),
    );
    add(
      `depth ${k + 4} hidden in an inline fragment`,
      gql(`{ pets(limit: 1) { id } ... on Query { ${deep} } }`),
    );
  }
  // Chained fragments: each adds one level once flattened.
  for (const k of range(3, 8)) {
    let doc = `{ pets(limit: 1) { id } __type(name: "Pet") { fields { type { ...T0 } } } }`;
    for (const i of range(0, k - 1)) doc += ` fragment T${i} on __Type { ofType { ...T${i + 1} } }`;
    doc += ` fragment T${k} on __Type { name }`;
    add(`depth ${k + 4} through ${k} chained fragments`, gql(doc));
  }
  return cases;
}

function aliasCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend) =>
    cases.push({ name, class: 'aliases', send, code: 'ALIAS_LIMIT_EXCEEDED', status: 400 });
  for (const n of [11, 12, 13, 15, 20, 30, 40, 50]) {
    add(`${n} aliased pets`, gql(`{ ${repeat(n, (i) => `p${i}: pets(limit: 1) { id }`)} }`));
    add(`${n} aliased ids inside pets`, gql(`{ pets(limit: 1) { ${repeat(n, (i) => `i${i}: id`)} } }`));
    add(`${n} aliased pet(id)`, gql(`{ ${repeat(n, (i) => `p${i}: pet(id: "${i + 1}") { id }`)} }`));
    add(
      `${n} aliases spread over ${Math.ceil(n / 5)} fragments`,
      gql(
        `{ pets(limit: 1) { ${repeat(Math.ceil(n / 5), (f) => `...F${f}`)} } } ${repeat(
          Math.ceil(n / 5),
          (f) => `fragment F${f} on Pet { ${repeat(5, (i) => `a${f}_${i}: name`)} }`,
        )}`,
      ),
    );
    add(
      `${n} aliased __schema beside pets`,
      gql(`{ pets(limit: 1) { id } ${repeat(n, (i) => `s${i}: __schema { queryType { name } }`)} }`),
    );
  }
  return cases;
}

function duplicateFieldCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend, code: string) =>
    cases.push({ name, class: 'duplicate fields', send, code, status: statusOf(code) });
  // Repeated selections merge in the answer but are each priced: limit × selections > 1000.
  for (const limit of [11, 20, 50, 100]) {
    for (const n of [Math.floor(1000 / limit) + 1, 150, 300, 600]) {
      add(
        `pets(limit: ${limit}) with id ×${n}`,
        gql(`{ pets(limit: ${limit}) { ${repeat(n, () => 'id')} } }`),
        'COST_LIMIT_EXCEEDED',
      );
    }
  }
  for (const m of range(3, 12)) {
    add(
      `pets(limit: 100) { id name categoryId status } ×${m}`,
      gql(`{ ${repeat(m, () => 'pets(limit: 100) { id name categoryId status }')} }`),
      'COST_LIMIT_EXCEEDED',
    );
  }
  for (const n of [800, 1500, 5000, 10000]) {
    add(`name ×${n}`, gql(`{ pets(limit: 1) { ${repeat(n, () => 'name')} } }`), 'TOKEN_LIMIT_EXCEEDED');
  }
  return cases;
}

function directiveCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend) =>
    cases.push({ name, class: 'directives', send, code: 'DIRECTIVE_LIMIT_EXCEEDED', status: 400 });
  // graphql-armor's max-directives skips the directives of a repeated spread of the same fragment;
  // src/yoga/validation/coded-errors.ts counts every directive in the document as well.
  for (const n of [11, 12, 15, 20, 40]) {
    add(
      `@include ×${n} on one field`,
      gql(`{ pets(limit: 1) { id ${repeat(n, () => '@include(if: true)')} } }`),
    );
    add(
      `@skip ×${n} over ${n} fields`,
      gql(`{ pets(limit: 1) { ${repeat(n, () => 'id @skip(if: false)')} } }`),
    );
    add(
      `unknown @x ×${n} on the operation`,
      gql(`query Q ${repeat(n, (i) => `@x${i}`)} { pets(limit: 1) { id } }`),
    );
    cases.push({
      name: `@include ×${n} on spreads of one fragment`,
      class: 'directives',
      send: gql(
        `{ pets(limit: 1) { ${repeat(n, () => '...F @include(if: true)')} } } fragment F on Pet { id }`,
      ),
      code: 'DIRECTIVE_LIMIT_EXCEEDED',
      status: 400,
    });
    add(
      `@include ×${n} on spreads of ${n} fragments`,
      gql(
        `{ pets(limit: 1) { ${repeat(n, (i) => `...F${i} @include(if: true)`)} } } ${repeat(n, (i) => `fragment F${i} on Pet { id }`)}`,
      ),
    );
    add(
      `@skip ×${n} on inline fragments`,
      gql(`{ pets(limit: 1) { ${repeat(n, () => '... @skip(if: false) { id }')} } }`),
    );
  }
  return cases;
}

function tokenCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend) =>
    cases.push({ name, class: 'token count', send, code: 'TOKEN_LIMIT_EXCEEDED', status: 400 });
  for (const n of [801, 1000, 2000, 3000, 5000]) {
    add(`${n} __typename`, gql(`{ ${repeat(n, () => '__typename')} }`));
    add(
      `${Math.ceil(n / 3)} arguments`,
      gql(`{ pets(${repeat(Math.ceil(n / 3), (i) => `a${i}: 1`)}) { id } }`),
    );
    add(`${n} list values`, gql(`{ pets(limit: [${repeat(n, () => '1')}]) { id } }`));
    add(
      `${Math.ceil(n / 4)} variable definitions`,
      gql(`query Q(${repeat(Math.ceil(n / 4), (i) => `$v${i}: Int`)}) { __typename }`),
    );
    add(
      `${Math.ceil(n / 6)} tiny fragments`,
      gql(`{ ...F0 } ${repeat(Math.ceil(n / 6), (i) => `fragment F${i} on Query { __typename }`)}`),
    );
  }
  return cases;
}

function fragmentCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend, code: string) =>
    cases.push({ name, class: 'fragment fan-out and cycles', send, code, status: statusOf(code) });
  // Fan-out: each fragment spreads the next one `fan` times: fan^levels fields once flattened.
  for (const [fan, levels] of [
    ...range(10, 20).map((l) => [2, l] as const),
    [2, 25] as const,
    [2, 30] as const,
    ...range(7, 12).map((l) => [3, l] as const),
    [4, 10] as const,
  ]) {
    let doc = '{ pets(limit: 1) { ...F0 } }';
    for (const i of range(0, levels - 1))
      doc += ` fragment F${i} on Pet { ${repeat(fan, () => `...F${i + 1}`)} }`;
    doc += ` fragment F${levels} on Pet { id name }`;
    add(`${levels} levels spreading the next fragment ×${fan}`, gql(doc), 'COST_LIMIT_EXCEEDED');
  }
  // Cycles of every length, on Pet and on Query, used or not.
  for (const k of range(1, 12)) {
    let cycle = '';
    for (const i of range(0, k - 1)) cycle += ` fragment C${i} on Pet { id ...C${(i + 1) % k} }`;
    add(
      `cycle of ${k} fragments on Pet`,
      gql(`{ pets(limit: 1) { ...C0 } }${cycle}`),
      'GRAPHQL_VALIDATION_FAILED',
    );
    let onQuery = '';
    for (const i of range(0, k - 1))
      onQuery += ` fragment Q${i} on Query { pets(limit: 1) { id } ...Q${(i + 1) % k} }`;
    add(`cycle of ${k} fragments on Query`, gql(`{ ...Q0 }${onQuery}`), 'GRAPHQL_VALIDATION_FAILED');
  }
  add(
    'unused self-spreading fragment',
    gql('{ pets(limit: 1) { id } } fragment A on Pet { ...A }'),
    'GRAPHQL_VALIDATION_FAILED',
  );
  add(
    'cycle through inline fragments',
    gql('{ pets(limit: 1) { ...A } } fragment A on Pet { ... on Pet { ... { ...A } } }'),
    'GRAPHQL_VALIDATION_FAILED',
  );
  add(
    'cycle through a nested selection',
    gql(
      '{ ...A } fragment A on Query { pets(limit: 1) { id } __schema { queryType { ...T } } } fragment T on __Type { fields { type { ...T } } }',
    ),
    'GRAPHQL_VALIDATION_FAILED',
  );
  add('spread of an undefined fragment', gql('{ pets(limit: 1) { ...Nope } }'), 'GRAPHQL_VALIDATION_FAILED');
  add(
    'fragment on a type that does not exist',
    gql('{ pets(limit: 1) { ...A } } fragment A on Nope { id }'),
    'GRAPHQL_VALIDATION_FAILED',
  );
  return cases;
}

function introspectionCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend, code: string) =>
    cases.push({ name, class: 'deep introspection', send, code, status: statusOf(code) });
  // Pure introspection is bounded at 15.
  for (const k of range(12, 21)) {
    add(
      `__type ofType chain to depth ${k + 4}`,
      gql(`{ __type(name: "Pet") { fields { type { ${ofTypes(k)} } } } }`),
      'DEPTH_LIMIT_EXCEEDED',
    );
    add(
      `__schema types/fields chain to depth ${k + 5}`,
      gql(`{ __schema { types { fields { type { ${ofTypes(k)} } } } } }`),
      'DEPTH_LIMIT_EXCEEDED',
    );
  }
  for (const k of range(12, 16)) {
    add(
      `__type chain to depth ${k + 4} over GET`,
      get({ query: `{ __type(name: "Pet") { fields { type { ${ofTypes(k)} } } } }` }),
      'DEPTH_LIMIT_EXCEEDED',
    );
  }
  for (const n of range(7, 11)) {
    add(
      `fields/type nested ${n} times`,
      gql(`{ __schema { types { ${'fields { type { '.repeat(n)}name${' } }'.repeat(n)} } } }`),
      'DEPTH_LIMIT_EXCEEDED',
    );
  }
  for (const n of [11, 20, 50]) {
    add(
      `${n} aliased __type`,
      gql(`{ ${repeat(n, (i) => `t${i}: __type(name: "Pet") { name }`)} }`),
      'ALIAS_LIMIT_EXCEEDED',
    );
    add(
      `${n} aliased __schema`,
      gql(`{ ${repeat(n, (i) => `s${i}: __schema { types { name } }`)} }`),
      'ALIAS_LIMIT_EXCEEDED',
    );
  }
  add(
    'recursive __Type fragment',
    gql('{ __schema { types { ...T } } } fragment T on __Type { ofType { ...T } }'),
    'GRAPHQL_VALIDATION_FAILED',
  );
  add(
    'mutually recursive __Type fragments',
    gql(
      '{ __schema { types { ...A } } } fragment A on __Type { fields { type { ...B } } } fragment B on __Type { ofType { ...A } }',
    ),
    'GRAPHQL_VALIDATION_FAILED',
  );
  add('__type without name', gql('{ __type { name } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('__type(name: 1)', gql('{ __type(name: 1) { name } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('__schema with an argument', gql('{ __schema(x: 1) { types { name } } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('unknown introspection field', gql('{ __schema { secrets } }'), 'GRAPHQL_VALIDATION_FAILED');
  add(
    '__schema on Pet',
    gql('{ pets(limit: 1) { __schema { types { name } } } }'),
    'GRAPHQL_VALIDATION_FAILED',
  );
  return cases;
}

function batchingCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, body: string) =>
    cases.push({
      name,
      class: 'batching',
      send: postText(body),
      code: 'BAD_REQUEST',
      status: 400,
      secret: ECHO_MARKER,
    });
  // Batches of 1 to MAX_BATCH_OPERATIONS (10) plain operations are served (test/yoga/batches.test.ts);
  // what is refused as a whole, before anything runs: more, none, and entries that are not objects.
  // An object entry with a parameter of the wrong type fails alone (test/yoga/batches.test.ts).
  const op = JSON.stringify({ query: '{ pets(limit: 1) { id } }', variables: { marker: ECHO_MARKER } });
  for (const n of [11, 50, 200]) add(`array of ${n} operations`, `[${repeat(n, () => op, ',')}]`);
  add('empty array', '[]');
  add('array of null', '[null]');
  add('array of numbers', '[1,2,3]');
  add('array of an operation and a string', `[${op},"${ECHO_MARKER}"]`);
  add('nested array', `[[${op}]]`);
  add('array of 1000 empty objects', `[${repeat(1000, () => '{}', ',')}]`);
  for (const depth of [10, 100, 1000, 20000])
    add(`${depth} nested arrays`, `${'['.repeat(depth)}${']'.repeat(depth)}`);
  return cases;
}

const CAP = 64 * 1024;
const oversizedBody = (size: number) => {
  const filler = 'x'.repeat(Math.max(0, size - 40));
  return Buffer.from(JSON.stringify({ query: '{ __typename }', variables: { filler } }).padEnd(size, ' '));
};

function bodyCapCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend | RawSend, code = 'PAYLOAD_TOO_LARGE') =>
    cases.push({ name, class: 'body cap', send, code, status: statusOf(code) });
  const head = (extra: string[]) => [
    'POST {path} HTTP/1.1',
    'Host: gateway',
    'Content-Type: application/json',
    `Authorization: ${CORPUS_AUTH}`,
    ...extra,
  ];
  for (const size of [CAP + 1, CAP + 1024, 100_000, 256 * 1024, 1024 * 1024]) {
    add(`honest Content-Length of ${size} bytes`, postText(oversizedBody(size)));
    add(`chunked body of ${size} bytes, no length`, {
      kind: 'raw',
      head: `${head(['Transfer-Encoding: chunked']).join('\r\n')}\r\n\r\n`,
      body: chunked(oversizedBody(size), 8192),
    });
  }
  for (const declared of [CAP + 1, 10 ** 9, 10 ** 15]) {
    // The cap is checked on the declared length before a byte of the body is read.
    add(`Content-Length ${declared} with only the first bytes sent`, {
      kind: 'raw',
      head: `${head([`Content-Length: ${declared}`]).join('\r\n')}\r\n\r\n{"query":`,
    });
  }
  add('chunked body in 1-byte chunks past the cap', {
    kind: 'raw',
    head: `${head(['Transfer-Encoding: chunked']).join('\r\n')}\r\n\r\n`,
    body: chunked(oversizedBody(CAP + 100), 1),
  });
  add(
    'a 1 MB name for createPet',
    post({
      query: 'mutation M($name: String!) { createPet(input: { name: $name, categoryId: "1" }) { id } }',
      variables: { name: 'n'.repeat(1024 * 1024) },
    }),
  );
  add('a 1 MB query string', post({ query: `{ __typename } # ${'c'.repeat(1024 * 1024)}` }));
  // A Content-Length smaller than the body: the rest is parsed as a next request and refused.
  for (const declared of [1, 10, 100, 1000]) {
    const body = oversizedBody(CAP + 10).toString();
    add(
      `Content-Length ${declared} in front of a ${body.length}-byte body`,
      raw([...head([`Content-Length: ${declared}`])], body),
      'BAD_REQUEST',
    );
  }
  return cases;
}

/** Encodes a body with Transfer-Encoding: chunked, in `size`-byte chunks. */
function chunked(body: Uint8Array, size: number): Uint8Array {
  const parts: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const chunk = body.subarray(i, i + size);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), Buffer.from(chunk), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function malformedHttpCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: RawSend, code = 'BAD_REQUEST') =>
    cases.push({ name, class: 'malformed HTTP', send, code, status: statusOf(code), secret: ECHO_MARKER });
  const body = JSON.stringify({ query: '{ __typename }', variables: { marker: ECHO_MARKER } });
  const start = [
    'POST {path} HTTP/1.1',
    'Host: gateway',
    'Content-Type: application/json',
    `Authorization: ${CORPUS_AUTH}`,
  ];
  for (const value of ['abc', '-1', '1.5', '0x10', '1e3', '10 20', '+10', '', '99999999999999999999999']) {
    add(`Content-Length: "${value}"`, raw([...start, `Content-Length: ${value}`], body));
  }
  add(
    'two different Content-Lengths',
    raw([...start, 'Content-Length: 5', `Content-Length: ${body.length}`], body),
  );
  add(
    'Content-Length and Transfer-Encoding',
    raw([...start, `Content-Length: ${body.length}`, 'Transfer-Encoding: chunked'], body),
  );
  add(
    'Transfer-Encoding: gzip, chunked',
    raw(
      [...start, 'Transfer-Encoding: gzip, chunked'],
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    ),
  );
  add('Transfer-Encoding: chunked, identity', raw([...start, 'Transfer-Encoding: chunked, identity'], body));
  add('chunk size not hex', raw([...start, 'Transfer-Encoding: chunked'], `zz\r\n${body}\r\n0\r\n\r\n`));
  add(
    'chunk size too long',
    raw([...start, 'Transfer-Encoding: chunked'], `${'f'.repeat(20)}\r\n${body}\r\n0\r\n\r\n`),
  );
  add(
    'chunk without CRLF after data',
    raw([...start, 'Transfer-Encoding: chunked'], `5\r\n${body}0\r\n\r\n`),
  );
  add(
    'NUL in the request line',
    raw(['POST /graphql\0 HTTP/1.1', ...start.slice(1), `Content-Length: ${body.length}`], body),
  );
  add('space before a header colon', raw([...start, `Content-Length : ${body.length}`], body));
  add('header without a colon', raw([...start, 'Broken header', `Content-Length: ${body.length}`], body));
  add('obsolete line folding', raw([...start, 'X-Folded: a', ' b', `Content-Length: ${body.length}`], body));
  add('garbage request line', raw([`${ECHO_MARKER} ${ECHO_MARKER}`, ...start.slice(1)]));
  add('headers of 20 KB', raw([...start, `X-Padding: ${'p'.repeat(20 * 1024)}`]), 'HEADERS_TOO_LARGE');
  add(
    '1000 small headers',
    raw([...start, ...range(1, 1000).map((i) => `X-H${i}: ${'v'.repeat(20)}`)]),
    'HEADERS_TOO_LARGE',
  );
  return cases;
}

function malformedJsonCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, body: string | Uint8Array, secret: string | undefined = ECHO_MARKER) =>
    cases.push({
      name,
      class: 'malformed JSON and encodings',
      send: postText(body),
      code: 'BAD_REQUEST',
      status: 400,
      ...(secret ? { secret } : {}),
    });
  const valid = JSON.stringify({ query: '{ pets(limit: 1) { id } }', variables: { marker: ECHO_MARKER } });
  // Every prefix that ends after the marker started cuts a JSON value short.
  const markerAt = valid.indexOf(ECHO_MARKER);
  for (const cut of [
    1,
    2,
    9,
    10,
    20,
    markerAt,
    markerAt + 5,
    markerAt + ECHO_MARKER.length,
    valid.length - 2,
    valid.length - 1,
  ]) {
    add(
      `body cut after ${cut} bytes`,
      valid.slice(0, cut),
      cut > markerAt ? ECHO_MARKER.slice(0, cut - markerAt) : undefined,
    );
  }
  const m = ECHO_MARKER;
  const shapes: Array<[string, string]> = [
    ['single quotes', `{'query':'{ __typename }','m':'${m}'}`],
    ['unquoted keys', `{query:"{ __typename }",m:"${m}"}`],
    ['trailing comma', `{"query":"{ __typename }","m":"${m}",}`],
    ['missing comma', `{"query":"{ __typename }" "m":"${m}"}`],
    ['missing value', `{"m":"${m}","query":}`],
    ['comment', `{"m":"${m}" /* x */,"query":"{ __typename }"}`],
    ['NaN', `{"m":"${m}","query":NaN}`],
    ['Infinity', `{"m":"${m}","query":Infinity}`],
    ['hex number', `{"m":"${m}","query":0x10}`],
    ['bad escape', `{"m":"${m}","query":"\\x41"}`],
    ['short unicode escape', `{"m":"${m}","query":"\\u12"}`],
    ['raw control character in a string', `{"m":"${m}\u0001","query":"{ __typename }"}`],
    ['raw newline in a string', `{"m":"${m}\n","query":"{ __typename }"}`],
    ['unterminated string', `{"m":"${m}`],
    ['two objects', `{"query":"{ __typename }"}{"m":"${m}"}`],
    ['object then garbage', `{"query":"{ __typename }"} ${m}`],
    ['double BOM', `\uFEFF\uFEFF{"m":"${m}","query":"{ __typename }"}`],
    ['NUL before the body', `\u0000{"m":"${m}","query":"{ __typename }"}`],
    ['NUL after the body', `{"m":"${m}","query":"{ __typename }"}\u0000`],
    ['NUL between tokens', `{"m":"${m}",\u0000"query":"{ __typename }"}`],
    ['raw NUL inside a string', `{"m":"${m}\u0000","query":"{ __typename }"}`],
    ['XML', `<query m="${m}">{ __typename }</query>`],
    ['form encoding', `query=%7B__typename%7D&m=${m}`],
    ['bare GraphQL', `{ __typename } # ${m}`],
  ];
  for (const [name, body] of shapes) add(name, body);
  // Invalid UTF-8 sequences at the start, inside a string and at the end.
  const invalid: Array<[string, number[]]> = [
    ['0xFF', [0xff]],
    ['0xFE 0xFF', [0xfe, 0xff]],
    ['overlong slash', [0xc0, 0xaf]],
    ['overlong NUL', [0xc0, 0x80]],
    ['overlong 3-byte', [0xe0, 0x80, 0xaf]],
    ['UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['lone continuation byte', [0x80]],
    ['truncated 3-byte sequence', [0xe2, 0x82]],
    ['5-byte form', [0xf8, 0x88, 0x80, 0x80, 0x80]],
  ];
  for (const [name, seq] of invalid) {
    add(`${name} before the body`, bytes(seq, `{"query":"{ __typename }","m":"${m}"}`));
    add(`${name} inside a string`, bytes(`{"query":"{ __typename }","m":"${m}`, seq, '"}'));
    add(`${name} after the body`, bytes(`{"query":"{ __typename }","m":"${m}"}`, seq));
  }
  add(
    'UTF-16LE body with BOM',
    Buffer.from(`\uFEFF{"query":"{ __typename }","m":"${m}"}`, 'utf16le'),
    undefined,
  );
  add('UTF-16BE body', Buffer.from(`{"query":"{ __typename }","m":"${m}"}`, 'utf16le').swap16(), undefined);
  add('Latin-1 é in a string', bytes(`{"query":"{ __typename }","m":"${m}`, [0xe9], '"}'));
  // JSON, but not an object.
  for (const body of [
    'null',
    '1',
    '"x"',
    'true',
    'false',
    '0',
    '-1.5e300',
    '""',
    `"${m}"`,
    JSON.stringify(valid),
    '  null  ',
    '\uFEFFnull',
  ]) {
    add(`non-object body ${JSON.stringify(body)}`, body);
  }
  add('empty body', '', undefined);
  add('whitespace-only body', ' \n\t\r ', undefined);
  return cases;
}

function contentTypeCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const body = JSON.stringify({ query: '{ pets(limit: 1) { id } }' });
  const add = (name: string, send: FetchSend) =>
    cases.push({ name, class: 'content types', send, code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
  for (const type of [
    'text/plain',
    'text/plain; charset=utf-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/xml',
    'text/json',
    'application/javascript',
    'application/octet-stream',
    'application/graphql',
    'application/json-patch+json',
    'application/jsonx',
    'json',
    '*/*',
    'application/*',
    'text/html',
    'application/x-json',
  ]) {
    add(`Content-Type: ${type}`, postText(body, { 'content-type': type }));
  }
  add('Content-Type: (empty)', postText(body, { 'content-type': '' }));
  add(
    'form-urlencoded operation',
    postText(`query=${encodeURIComponent('{ pets(limit: 1) { id } }')}`, {
      'content-type': 'application/x-www-form-urlencoded',
    }),
  );
  add(
    'multipart operation',
    postText(`--xyz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${body}\r\n--xyz--\r\n`, {
      'content-type': 'multipart/form-data; boundary=xyz',
    }),
  );
  const noType: FetchSend = {
    kind: 'fetch',
    method: 'POST',
    headers: { accept: ACCEPT, authorization: CORPUS_AUTH },
    body: Buffer.from(body),
  };
  add('no Content-Type', noType);
  // A coding the gateway does not decode: never read the bytes as if they were plain (RFC 9110: 415).
  add('Content-Encoding: gzip on a plain JSON body', postText(body, { 'content-encoding': 'gzip' }));
  add('Content-Encoding: gzip on a gzip body', postText(gzipSync(body), { 'content-encoding': 'gzip' }));
  add('Content-Encoding: br', postText(body, { 'content-encoding': 'br' }));
  add('Content-Encoding: deflate, gzip', postText(body, { 'content-encoding': 'deflate, gzip' }));
  return cases;
}

function acceptCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend) =>
    cases.push({ name, class: 'accept', send, code: 'NOT_ACCEPTABLE', status: 406 });
  const list = { query: '{ pets(limit: 1) { id } }' };
  // Nothing may run for an answer that cannot be sent: a mutation's call would show in the log.
  const create = { query: 'mutation { createPet(input: { name: "Nox", categoryId: "1" }) { id } }' };
  for (const accept of [
    'text/html',
    'text/html,application/xhtml+xml,application/xml;q=0.9',
    'image/png',
    'application/xml',
    'text/plain',
    'application/json; charset=iso-8859-1',
    'application/graphql-response+json;charset=utf-16, application/json;charset=latin1',
    // A quality of 0 refuses the form it names (RFC 9110 §12.4.2).
    'multipart/mixed; q=0',
    'application/json;q=0, application/graphql-response+json;q=0.000, */*;q=0',
  ]) {
    add(`Accept: ${accept}`, post(list, { accept }));
    add(`Accept: ${accept}, a mutation`, post(create, { accept }));
  }
  add('Accept: application/xml over GET', {
    kind: 'fetch',
    method: 'GET',
    search: `query=${encodeURIComponent(list.query)}`,
    headers: { accept: 'application/xml', authorization: CORPUS_AUTH },
  });
  return cases;
}

function mutationOverGetCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, params: Record<string, string>) =>
    cases.push({
      name,
      class: 'mutations over GET',
      send: get(params),
      code: 'METHOD_NOT_ALLOWED',
      status: 405,
    });
  const create = 'createPet(input: { name: "x", categoryId: "1" }) { id }';
  add('anonymous mutation', { query: `mutation { ${create} }` });
  add('named mutation', { query: `mutation M { ${create} }` });
  add('mutation with variables', {
    query: 'mutation M($i: NewPetInput!) { createPet(input: $i) { id } }',
    variables: JSON.stringify({ i: { name: 'x', categoryId: '1' } }),
  });
  add('mutation selected by operationName', {
    query: `query Q { __typename } mutation M { ${create} }`,
    operationName: 'M',
  });
  add('mutation with a fragment', {
    query: `mutation { createPet(input: { name: "x", categoryId: "1" }) { ...F } } fragment F on Pet { id }`,
  });
  add('mutation { __typename }', { query: 'mutation { __typename }' });
  add('mutation with a directive', { query: `mutation @x { ${create} }` });
  add('mutation after comments and whitespace', { query: `# comment\n\n  mutation { ${create} }` });
  add('ten aliased createPet', { query: `mutation { ${repeat(10, (i) => `c${i}: ${create}`)} }` });
  add('mutation with extensions', { query: `mutation { ${create} }`, extensions: '{}' });
  return cases;
}

function argumentCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (name: string, send: FetchSend, code: string, knownBug?: string) =>
    cases.push({
      name,
      class: 'argument abuse',
      send,
      code,
      status: statusOf(code),
      ...(knownBug ? { knownBug } : {}),
    });
  for (const limit of ['0', '101', '-1', '-2147483648']) {
    add(`limit: ${limit}`, gql(`{ pets(limit: ${limit}) { id } }`), 'BAD_USER_INPUT');
  }
  // Priced as asked (@listSize reads the limit): over MAX_COST before the contract's range is checked.
  for (const limit of ['2147483647', '1000']) {
    add(`limit: ${limit}`, gql(`{ pets(limit: ${limit}) { id } }`), 'COST_LIMIT_EXCEEDED');
  }
  for (const limit of [
    '2147483648',
    '-2147483649',
    '1e100',
    '1.5',
    '"1"',
    'true',
    '[1]',
    '{ a: 1 }',
    'TEN',
    '99999999999999999999999',
  ]) {
    add(`limit: ${limit}`, gql(`{ pets(limit: ${limit}) { id } }`), 'GRAPHQL_VALIDATION_FAILED');
  }
  for (const limit of [0, 101, -1]) {
    add(
      `$limit = ${limit}`,
      gql('query Q($limit: Int) { pets(limit: $limit) { id } }', { limit }),
      'BAD_USER_INPUT',
    );
  }
  // graphql-js variable coercion errors come without a code; src/yoga/validation/coded-errors.ts gives them one.
  // Nothing runs, so unlike a refused argument value they are request errors: 400.
  for (const limit of ['1', 2 ** 31, 1.5, true, [1], { a: 1 }]) {
    cases.push({
      name: `$limit = ${JSON.stringify(limit)}`,
      class: 'argument abuse',
      send: gql('query Q($limit: Int) { pets(limit: $limit) { id } }', { limit }),
      code: 'BAD_USER_INPUT',
      status: 400,
    });
  }
  // "+1", " 1" and "007" are accepted and canonicalised (test/contract/int64.test.ts).
  const badIds = [
    '',
    'abc',
    '1.5',
    '-',
    '0x1F',
    '1e3',
    '99999999999999999999',
    '9223372036854775808',
    '-9223372036854775809',
    '١٢٣',
    '1\u0000',
    'x'.repeat(10_240),
    '1'.repeat(10_240),
    `9${'0'.repeat(10_239)}`,
  ];
  for (const id of badIds) {
    const label = id.length > 30 ? `${id.slice(0, 3)}… (${id.length} chars)` : JSON.stringify(id);
    add(`pet(id: ${label})`, gql('query Q($id: ID!) { pet(id: $id) { id } }', { id }), 'BAD_USER_INPUT');
  }
  for (const id of ['abc', '1.5', '99999999999999999999', 'x'.repeat(10_240)]) {
    const label = id.length > 30 ? `${id.slice(0, 3)}… (${id.length} chars)` : JSON.stringify(id);
    add(`pet(id: ${label}) as a literal`, gql(`{ pet(id: ${JSON.stringify(id)}) { id } }`), 'BAD_USER_INPUT');
    add(
      `createPet categoryId ${label}`,
      gql('mutation M($c: ID!) { createPet(input: { name: "Rex", categoryId: $c }) { id } }', { c: id }),
      'BAD_USER_INPUT',
    );
  }
  add('pet(id: null)', gql('{ pet(id: null) { id } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('pet without id', gql('{ pet { id } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('pet(id: 1.5)', gql('{ pet(id: 1.5) { id } }'), 'GRAPHQL_VALIDATION_FAILED');
  // Enum-value suggestions ("Did you mean the enum value …") are stripped like field suggestions.
  add('pets(status: available)', gql('{ pets(status: available) { id } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('pets(status: "AVAILABLE")', gql('{ pets(status: "AVAILABLE") { id } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('pets(status: UNKNOWN)', gql('{ pets(status: UNKNOWN) { id } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('unknown argument', gql('{ pets(owner: "me") { id } }'), 'GRAPHQL_VALIDATION_FAILED');
  add('unknown field', gql('{ pets(limit: 1) { nam } }'), 'GRAPHQL_VALIDATION_FAILED');
  add(
    'createPet without categoryId',
    gql('mutation { createPet(input: { name: "Rex" }) { id } }'),
    'GRAPHQL_VALIDATION_FAILED',
  );
  add(
    'createPet with an id',
    gql('mutation { createPet(input: { id: "1", name: "Rex", categoryId: "1" }) { id } }'),
    'GRAPHQL_VALIDATION_FAILED',
  );
  add('a 10 KB argument name', gql(`{ pets(${'a'.repeat(10_240)}: 1) { id } }`), 'GRAPHQL_VALIDATION_FAILED');
  add('unterminated string argument', gql('{ pet(id: "1) { id } }'), 'GRAPHQL_PARSE_FAILED');
  add('a 60 KB block string', gql(`{ pet(id: """${'1'.repeat(60_000)}""") { id } }`), 'BAD_USER_INPUT');
  return cases;
}

function authCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const operations: Array<[string, string]> = [
    ['pets', '{ pets(limit: 1) { id } }'],
    ['pet', '{ pet(id: "1") { id } }'],
    ['createPet', 'mutation { createPet(input: { name: "Rex", categoryId: "1" }) { id } }'],
  ];
  // Any case of "Bearer" and several spaces before the token are accepted, as RFC 9110 allows
  // (test/upstream/authorization.test.ts).
  const values: Array<[string, string | undefined]> = [
    ['missing', undefined],
    ['empty', ''],
    ['"Bearer"', 'Bearer'],
    ['"Bearer " and nothing', 'Bearer  '],
    ['Basic', 'Basic dXNlcjpwYXNz'],
    ['Token scheme', `Token ${CORPUS_TOKEN}`],
    ['two words after Bearer', `Bearer ${CORPUS_TOKEN} extra`],
    ['tab instead of space', `Bearer\t${CORPUS_TOKEN}`],
    ['comma-joined tokens', `Bearer ${CORPUS_TOKEN},${CORPUS_TOKEN}`],
    ['padding before the token', `Bearer =${CORPUS_TOKEN}`],
    ['quotes', `Bearer "${CORPUS_TOKEN}"`],
    ['an 8 KB token', `Bearer ${'t'.repeat(8 * 1024)}`],
    ['a 4097-character header', `Bearer ${'t'.repeat(4090)}`],
  ];
  for (const [opName, query] of operations) {
    for (const [valueName, value] of values) {
      const headers: Record<string, string> = { ...JSON_HEADERS };
      if (value !== undefined) headers.authorization = value;
      cases.push({
        name: `${opName} with ${valueName} Authorization`,
        class: 'auth abuse',
        send: { kind: 'fetch', method: 'POST', headers, body: JSON.stringify({ query }) },
        code: 'UNAUTHENTICATED',
        status: 200,
      });
    }
    const body = JSON.stringify({ query });
    const start = [
      'POST {path} HTTP/1.1',
      'Host: gateway',
      'Content-Type: application/json',
      `Accept: ${ACCEPT}`,
    ];
    const rawCase = (name: string, headers: string[], code = 'BAD_REQUEST') =>
      cases.push({
        name: `${opName} with ${name}`,
        class: 'auth abuse',
        send: raw([...start, ...headers, `Content-Length: ${Buffer.byteLength(body)}`], body),
        code,
        status: statusOf(code),
      });
    rawCase('two identical Authorization headers', [
      `Authorization: ${CORPUS_AUTH}`,
      `Authorization: ${CORPUS_AUTH}`,
    ]);
    rawCase('two different Authorization headers', [
      `Authorization: ${CORPUS_AUTH}`,
      'Authorization: Bearer other',
    ]);
    rawCase('Authorization in two spellings', [
      `authorization: ${CORPUS_AUTH}`,
      `AUTHORIZATION: ${CORPUS_AUTH}`,
    ]);
    rawCase('a bare CR in Authorization', [`Authorization: Bearer ${CORPUS_TOKEN}\rX-Injected: 1`]);
    rawCase('a bare LF in Authorization', [`Authorization: Bearer ${CORPUS_TOKEN}\nX-Injected: 1`]);
    rawCase('a NUL in Authorization', [`Authorization: Bearer ${CORPUS_TOKEN}\0`]);
    rawCase('a 20 KB Authorization', [`Authorization: Bearer ${'t'.repeat(20 * 1024)}`], 'HEADERS_TOO_LARGE');
    rawCase(
      'Latin-1 bytes in Authorization',
      [`Authorization: Bearer ${CORPUS_TOKEN}\u00e9\u00ff`],
      'UNAUTHENTICATED',
    );
  }
  return cases;
}

/** The whole corpus, in a stable order. */
export function hostileCorpus(): HostileCase[] {
  const cases = [
    ...depthCases(),
    ...aliasCases(),
    ...duplicateFieldCases(),
    ...directiveCases(),
    ...tokenCases(),
    ...fragmentCases(),
    ...introspectionCases(),
    ...batchingCases(),
    ...bodyCapCases(),
    ...malformedHttpCases(),
    ...malformedJsonCases(),
    ...contentTypeCases(),
    ...acceptCases(),
    ...mutationOverGetCases(),
    ...argumentCases(),
    ...authCases(),
  ];
  const names = new Set<string>();
  for (const c of cases) {
    const key = `${c.class}: ${c.name}`;
    if (names.has(key)) throw new Error(`duplicate corpus case ${key}`);
    names.add(key);
  }
  return cases;
}
