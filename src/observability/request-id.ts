import { randomUUID } from 'node:crypto';

/**
 * Every answer carries `x-request-id` and its log line the same id: the caller's own when it sent a
 * sane one (so a trace crosses the proxy in front), else a new UUID.
 */
const REQUEST_ID = /^[\w.:-]{1,128}$/;

declare const sane: unique symbol;
/** A request id that is a UUID or matched REQUEST_ID: JSON and header safe as it is. */
export type RequestId = string & { readonly [sane]: true };

/** The caller's `x-request-id` when it is sane, else a new one. */
export function requestIdOf(header: string | null | undefined): RequestId {
  return (header && REQUEST_ID.test(header) ? header : randomUUID()) as RequestId;
}
