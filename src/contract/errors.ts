/**
 * Every error condition of the animal store, with its HTTP status, as the reference service answers
 * it (the contract names the Error body's shape; these codes are the reference service's). The `code` is the stable,
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
