import { LIST_LIMIT, PET_SUNSET_DAY } from '../contract/animal-store.ts';

/**
 * When this gateway's schema first marked `pet(id)` deprecated; sent as `Deprecation` (RFC 9745)
 * unless the upstream sent its own date.
 */
export const PET_DEPRECATED_SINCE = new Date('2026-11-22T00:00:00Z');
/**
 * What the contract's replacement for `GET /pets/{petId}` (`GET /pets` with its status filter) cannot
 * do, said where a front-end developer reads it: the field's description and its deprecation reason.
 */
export const PET_REPLACEMENT_LIMITS = `Deprecated: the upstream GET /pets/{petId} is removed on ${PET_SUNSET_DAY}. The contract's replacement, \`pets(status:, limit:)\` (REST \`GET /pets\` with its status filter), cannot look an animal up by id, and returns at most ${LIST_LIMIT.max} animals with no way to page past them: until the contract adds a by-id route, an animal beyond the first ${LIST_LIMIT.max} of its status cannot be found.`;
/** One sentence, shown on every answer that ran `pet(id)`: the long story is in the description and the README. */
export const PET_DEPRECATION_REASON = `Removed on ${PET_SUNSET_DAY}; \`pets(status:, limit:)\` replaces it but cannot find a pet by id (README.md#deprecation-timeline).`;

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

/** Where the upstream's announcement on `GET /pets/{petId}` is kept: the request's loaders. */
export interface UpstreamAnnouncement {
  readonly upstreamPetDeprecation: { deprecation?: string; sunset?: string } | undefined;
}

/** Collects, for one request, the deprecated fields it touched and what the upstream said about them. */
export class DeprecationNotices {
  // Made on first use: most operations touch nothing deprecated, and one is made per operation.
  #byField: Map<string, DeprecationNotice> | undefined;
  readonly #heard: UpstreamAnnouncement | undefined;

  /**
   * `heard` tells what the upstream announced on `GET /pets/{petId}` (the request's loaders,
   * shared by a batch's entries), read when the notices are: it makes no notice on its own, since
   * `_entities` loads through the same route and a router resolving keys has not used the
   * deprecated field (docs/federation.md).
   */
  constructor(heard?: UpstreamAnnouncement) {
    this.#heard = heard;
  }

  /** Records that `pet(id)` ran in this operation. */
  usePet(): void {
    this.#byField ??= new Map();
    if (this.#byField.has('Query.pet')) return;
    this.#byField.set('Query.pet', {
      field: 'Query.pet',
      reason: PET_DEPRECATION_REASON,
      replacement: 'Query.pets',
      sunset: PET_SUNSET_DAY,
    });
  }

  /** Records notices another run of the operation collected: a live query's poll. */
  adopt(notices: readonly DeprecationNotice[]): void {
    for (const notice of notices) {
      this.#byField ??= new Map();
      if (!this.#byField.has(notice.field)) this.#byField.set(notice.field, notice);
    }
  }

  get size(): number {
    return this.#byField?.size ?? 0;
  }

  list(): DeprecationNotice[] {
    if (!this.#byField) return [];
    const notice = this.#byField.get('Query.pet');
    const upstream = notice && !notice.upstream ? this.#heard?.upstreamPetDeprecation : undefined;
    if (notice && upstream) notice.upstream = upstream;
    return [...this.#byField.values()];
  }
}
