import type { Plugin } from 'graphql-yoga';

/** `GET /pets/{petId}` is removed on this day (the contract's Versioning section). */
export const PET_SUNSET = new Date('2030-12-05T00:00:00Z');
/**
 * When this gateway's schema first marked `pet(id)` deprecated; sent as `Deprecation` (RFC 9745)
 * unless the upstream sent its own date.
 */
export const PET_DEPRECATED_SINCE = new Date('2026-11-22T00:00:00Z');
export const PET_DEPRECATION_REASON = `Use \`pets(status:, limit:)\` instead: the upstream GET /pets/{petId} is deprecated and is removed on ${isoDay(PET_SUNSET)}.`;

/** One deprecated thing an operation used, as `extensions.deprecations` shows it. */
export interface DeprecationNotice {
  field: string;
  reason: string;
  replacement: string;
  /** YYYY-MM-DD */
  sunset: string;
  /** What the upstream itself announced on its response, when it did. */
  upstream?: { deprecation?: string; sunset?: string };
}

/** Collects, for one request, the deprecated fields it touched and what the upstream said about them. */
export class DeprecationNotices {
  readonly #byField = new Map<string, DeprecationNotice>();

  /** Records that `pet(id)` ran in this operation. */
  usePet(): void {
    if (this.#byField.has('Query.pet')) return;
    this.#byField.set('Query.pet', {
      field: 'Query.pet',
      reason: PET_DEPRECATION_REASON,
      replacement: 'Query.pets',
      sunset: isoDay(PET_SUNSET),
    });
  }

  /** Carries the upstream's `Deprecation` / `Sunset` headers into the pet notice. */
  upstreamPet(headers: { deprecation?: string; sunset?: string }): void {
    this.usePet();
    const notice = this.#byField.get('Query.pet');
    if (notice && !notice.upstream) notice.upstream = headers;
  }

  get size(): number {
    return this.#byField.size;
  }

  list(): DeprecationNotice[] {
    return [...this.#byField.values()];
  }
}

export interface DeprecationPluginOptions {
  /** Where a use of a deprecated field is reported (with the client's self-declared name). */
  onUse?: (event: { fields: string[]; clientName?: string; clientVersion?: string }) => void;
}

/**
 * Makes a deprecation visible to any client: `extensions.deprecations` in the result, and
 * `Deprecation` / `Sunset` headers (RFC 9745 / RFC 8594) on the HTTP response.
 */
export function useDeprecationNotices(options: DeprecationPluginOptions = {}): Plugin {
  const headersFor = new WeakMap<Request, DeprecationNotice[]>();
  return {
    onExecute() {
      return {
        onExecuteDone({ args, result, setResult }) {
          const notices = (args.contextValue as { deprecations?: DeprecationNotices }).deprecations;
          if (!notices || notices.size === 0 || !('data' in result)) return;
          const list = notices.list();
          const request = (args.contextValue as { request?: Request }).request;
          if (request) {
            headersFor.set(request, list);
            options.onUse?.({
              fields: list.map((notice) => notice.field),
              ...clientIdentity(request),
            });
          }
          setResult({ ...result, extensions: { ...result.extensions, deprecations: list } });
        },
      };
    },
    onResponse({ request, response }) {
      const list = headersFor.get(request);
      if (!list?.[0]) return;
      const upstream = list[0].upstream;
      response.headers.set(
        'Deprecation',
        upstream?.deprecation ?? `@${Math.floor(PET_DEPRECATED_SINCE.getTime() / 1000)}`,
      );
      response.headers.set('Sunset', upstream?.sunset ?? PET_SUNSET.toUTCString());
    },
  };
}

/** `graphql-client-name` / `-version`, bounded and limited to safe characters (they reach logs). */
function clientIdentity(request: Request): { clientName?: string; clientVersion?: string } {
  const clean = (value: string | null) => value?.replace(/[^\w.\-@/ ]/g, '').slice(0, 64) || undefined;
  const clientName = clean(request.headers.get('graphql-client-name'));
  const clientVersion = clean(request.headers.get('graphql-client-version'));
  return { ...(clientName ? { clientName } : {}), ...(clientVersion ? { clientVersion } : {}) };
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
