import type { Logger } from 'pino';
import { PET_SUNSET_HTTP } from '../contract/animal-store.ts';
import type { Metrics } from '../observability/metrics.ts';
import {
  type DeprecationNotice,
  type DeprecationNotices,
  PET_DEPRECATED_SINCE,
} from '../schema/deprecation.ts';

/** A use of deprecated fields by one operation, with the client's self-declared name. */
export interface DeprecatedUse {
  fields: string[];
  clientName?: string;
  clientVersion?: string;
}

/** `graphql-client-name` / `-version`, bounded and limited to safe characters (they reach logs). */
export function clientIdentity(header: (name: string) => string | null): {
  clientName?: string;
  clientVersion?: string;
} {
  const clean = (value: string | null) => value?.replace(/[^\w.\-@/ ]/g, '').slice(0, 64) || undefined;
  const clientName = clean(header('graphql-client-name'));
  const clientVersion = clean(header('graphql-client-version'));
  return { ...(clientName ? { clientName } : {}), ...(clientVersion ? { clientVersion } : {}) };
}

/**
 * `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) for the first deprecated thing an operation
 * used: the upstream's own values when it sent them, else this gateway's.
 */
export function deprecationHeaders(notice: DeprecationNotice): { deprecation: string; sunset: string } {
  return {
    deprecation: notice.upstream?.deprecation ?? `@${Math.floor(PET_DEPRECATED_SINCE.getTime() / 1000)}`,
    sunset: notice.upstream?.sunset ?? PET_SUNSET_HTTP,
  };
}

/**
 * An operation's use of deprecated fields, as every lane answers it: told to `onUse` (the log and
 * a metric) with the client's name from `header`, the notices for `extensions.deprecations`, and
 * the response's `Deprecation` / `Sunset` headers. Undefined when it used none.
 */
export function deprecationAnswer(
  notices: DeprecationNotices | undefined,
  header: (name: string) => string | null,
  onUse: ((use: DeprecatedUse) => void) | undefined,
): { notices: DeprecationNotice[]; headers: { deprecation: string; sunset: string } } | undefined {
  if (notices === undefined || notices.size === 0) return undefined;
  const list = notices.list();
  onUse?.({ fields: list.map((notice) => notice.field), ...clientIdentity(header) });
  return { notices: list, headers: deprecationHeaders(list[0] as DeprecationNotice) };
}

/** Where a use of a deprecated field goes, whichever lane served it: the log and a metric. */
export function deprecatedUseReporter(logger: Logger, metrics: Metrics | undefined) {
  return (use: DeprecatedUse): void => {
    logger.info(use, 'deprecated field used');
    metrics?.deprecatedUse(use.fields, use.clientName);
  };
}
