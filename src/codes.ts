/**
 * Every error code the gateway itself raises, each written here once with the HTTP status its answer
 * gets and the extensions it always carries, so that the edge, Yoga's plugins, the schema and MCP
 * cannot give one code two statuses. It sits at the bottom of src/ so that every layer may read it.
 * docs/api.md's "Error codes" table is held against it both ways (test/docs/error-codes.test.ts).
 * The upstream's own codes are not here: the gateway passes them on verbatim
 * (src/contract/errors.ts holds the reference service's).
 */

/** What the table says of one code. */
export interface Code {
  /** The code, as `extensions.code` carries it. */
  readonly code: string;
  /**
   * The HTTP status of the answer that carries the code: a refused request's own, or 200 for an
   * error only a field raises (GraphQL over HTTP answers it beside the data). Absent: no HTTP
   * answer carries it (a graphql-ws message).
   */
  readonly status?: number;
  /** Raised by a field as well, answered 200 beside the data, while `status` is the request's. */
  readonly field?: true;
  /** The status a batch entry refused with it carries (the batch itself answers 200). */
  readonly inBatch?: number;
  /** Extensions every error with this code carries beside it, always the same. */
  readonly extensions?: Readonly<Record<string, number>>;
  /** When the gateway raises it. */
  readonly means: string;
}

/** A code that answers an HTTP request, with the status that answer gets. */
export type Answered = Code & { readonly status: number };

const TABLE = {
  BAD_REQUEST: {
    status: 400,
    means: 'The request is unusable as sent: its HTTP framing, its body, or a parameter of the wrong type.',
  },
  BAD_USER_INPUT: {
    status: 400,
    field: true,
    means:
      'An argument or variable the gateway refuses before any upstream call: in a field, or while the variables are read.',
  },
  UNAUTHENTICATED: {
    status: 200,
    extensions: { status: 401 },
    means: 'A field needs the upstream and the request carries no usable bearer key.',
  },
  TOKEN_LIMIT_EXCEEDED: { status: 400, means: 'The document holds more tokens than MAX_TOKENS.' },
  DEPTH_LIMIT_EXCEEDED: { status: 400, means: 'The document nests deeper than MAX_DEPTH.' },
  ALIAS_LIMIT_EXCEEDED: { status: 400, means: 'The document holds more aliases than MAX_ALIASES.' },
  DIRECTIVE_LIMIT_EXCEEDED: { status: 400, means: 'The document holds more directives than MAX_DIRECTIVES.' },
  COST_LIMIT_EXCEEDED: { status: 400, means: "The operation's cost is over MAX_COST." },
  REPRESENTATIONS_LIMIT_EXCEEDED: {
    status: 400,
    means: 'An `_entities` field asks for more representations than MAX_REPRESENTATIONS.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, means: 'The request body is over MAX_BODY_BYTES.' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    means: 'A POST body that is not JSON, or that carries a Content-Encoding.',
  },
  NOT_ACCEPTABLE: {
    status: 406,
    means: 'The Accept header admits none of the forms the endpoint answers in.',
  },
  EXPECTATION_FAILED: { status: 417, means: 'An Expect header other than 100-continue.' },
  HEADERS_TOO_LARGE: { status: 431, means: "The request headers are over Node's limit." },
  REQUEST_TIMEOUT: { status: 408, means: 'The request, or its body, did not arrive in time.' },
  GRAPHQL_PARSE_FAILED: { status: 400, means: 'The document does not parse (worded by Yoga).' },
  GRAPHQL_VALIDATION_FAILED: {
    status: 400,
    means: 'The document does not validate against the schema (worded by Yoga).',
  },
  OPERATION_RESOLUTION_FAILURE: {
    status: 400,
    means: 'operationName names no operation of the document, or names none among several.',
  },
  RATE_LIMITED: {
    status: 429,
    means: 'The key, or the address without one, has used up RATE_LIMIT_PER_MINUTE.',
  },
  REFUSED_KEYS_LIMITED: {
    status: 429,
    means: 'The address had RATE_LIMIT_REFUSED_KEYS_PER_MINUTE keys refused: a new key waits.',
  },
  SUBSCRIPTION_NOT_SUPPORTED: {
    status: 400,
    means: 'A subscription or a `@live` query on a gateway started with LIVE=off.',
  },
  SUBSCRIPTION_NEEDS_STREAM: {
    status: 406,
    inBatch: 400,
    means:
      'A subscription or `@live` query whose events could never be sent: no event stream accepted, or inside a batch.',
  },
  LIVE_QUERY_NOT_WATCHABLE: {
    status: 400,
    means: 'A `@live` query with `@defer` or `@stream`, or one that reads nothing from the store.',
  },
  SUBSCRIPTION_LIMIT_EXCEEDED: {
    status: 429,
    means: 'The key already holds LIVE_MAX_PER_KEY subscriptions on this instance.',
  },
  SUBSCRIPTIONS_AT_CAPACITY: {
    status: 503,
    means: 'This instance holds LIVE_MAX_STREAMS subscriptions, or is shutting down.',
  },
  TOO_MANY_OPERATIONS: {
    means: 'A WebSocket already runs WS_MAX_OPERATIONS operations: this one is refused, the socket goes on.',
  },
  OVERLOADED: {
    status: 503,
    means: 'A connection admitted past MAX_CONNECTIONS for probes asked for something else.',
  },
  SHUTTING_DOWN: { status: 503, means: 'A WebSocket upgrade arrived while the gateway drains.' },
  NOT_FOUND: {
    status: 404,
    means: 'A path the gateway does not serve, or a WebSocket upgrade on a path other than /graphql.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    means: '/graphql asked with a method other than GET and POST, or a mutation over GET.',
  },
  FORBIDDEN: { status: 403, means: 'A WebSocket upgrade from an Origin the Origin rule refuses.' },
  UPSTREAM_TIMEOUT: {
    status: 200,
    means: 'The upstream gave no complete answer within UPSTREAM_TIMEOUT_MS.',
  },
  UPSTREAM_UNAVAILABLE: {
    status: 200,
    means: 'The upstream refused or dropped the connection, answered 502-504 bare, or the breaker is open.',
  },
  UPSTREAM_RATE_LIMITED: {
    status: 200,
    extensions: { status: 429 },
    means: 'The upstream answered 429 without an Error body.',
  },
  UPSTREAM_BAD_RESPONSE: { status: 200, means: 'The upstream answered outside its contract.' },
  CLIENT_GONE: {
    status: 499,
    means: 'The client left before its answer: its upstream GETs are cancelled, and only the log reads it.',
  },
  SUNSET: { status: 200, extensions: { status: 410 }, means: "A field's upstream route is past its sunset." },
  PERSISTED_QUERY_NOT_FOUND: {
    status: 404,
    means: 'A documentId or APQ hash the gateway neither has in its manifest nor has registered.',
  },
  PERSISTED_QUERY_NOT_SUPPORTED: { status: 400, means: 'An APQ hash outside the manifest while APQ=off.' },
  PERSISTED_QUERY_HASH_MISMATCH: {
    status: 400,
    means: 'A hash or id sent beside text that is not the document it names.',
  },
  PERSISTED_OPERATION_REQUIRED: {
    status: 403,
    means: 'PERSISTED_OPERATIONS=require and the request carries document text, or no id.',
  },
  INTERNAL_SERVER_ERROR: { status: 500, means: 'A bug of ours, its details masked (worded by Yoga).' },
} as const satisfies Record<string, Omit<Code, 'code'>>;

type Table = typeof TABLE;

/** Every code the gateway raises. */
export type CodeName = keyof Table;

/** Each code's entry, by its name; frozen, so reading one costs a property load and nothing more. */
export const CODES = Object.freeze(
  Object.fromEntries(
    Object.entries(TABLE).map(([code, facts]) => [
      code,
      Object.freeze({
        code,
        ...facts,
        ...('extensions' in facts ? { extensions: Object.freeze({ ...facts.extensions }) } : {}),
      }),
    ]),
  ),
) as { readonly [K in CodeName]: Table[K] & { readonly code: K } };
