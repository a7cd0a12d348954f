import { ERRORS, type ErrorCode } from '../contract/errors.ts';

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
