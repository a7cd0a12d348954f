/**
 * Every error condition of the reference service, with its HTTP status. The `code` is the stable,
 * machine-readable part of the contract's Error body; docs/reference-service.md's error table mirrors this one.
 */
export const ERRORS = {
  INVALID_LIMIT: 400,
  INVALID_STATUS: 400,
  INVALID_PET_ID: 400,
  UNSUPPORTED_MEDIA_TYPE: 400,
  INVALID_JSON: 400,
  INVALID_BODY: 400,
  MISSING_FIELD: 400,
  INVALID_FIELD: 400,
  UNKNOWN_FIELD: 400,
  UNAUTHENTICATED: 401,
  PET_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  /** the following three come from Node's HTTP parser (see `clientError` in server.ts) */
  BAD_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** The contract's Error body: `status` always repeats the HTTP status. */
export interface ErrorDto {
  code: ErrorCode;
  message: string;
  status: number;
}

/** A failure that becomes an Error response; thrown by routes, rendered once by the server. */
export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** extra response headers, e.g. `Allow` for 405 */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.status = ERRORS[code];
    this.headers = headers;
  }

  toDto(): ErrorDto {
    return { code: this.code, message: this.message, status: this.status };
  }
}
