/**
 * The animal store v1 contract's rules (docs/animal-store-interface.md, schema/openapi.yaml), written
 * once. The gateway checks arguments and upstream answers with them, the reference service enforces
 * them, and the tests' fault-injecting upstream answers by them; test/contract/openapi.test.ts holds
 * each value to the OpenAPI document.
 */

/** `PetStatus`. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

const STATUS_SET: ReadonlySet<unknown> = new Set(PET_STATUSES);

export function isPetStatus(value: unknown): value is PetStatus {
  return STATUS_SET.has(value);
}

/** `GET /pets?limit=`: an integer from `min` to `max`; `default` when absent. */
export const LIST_LIMIT = Object.freeze({ min: 1, max: 100, default: 20 });

/** Every id (`id`, `categoryId`, `petId`) is an int64. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function isInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

/*
 * `NewPet.name` / `Pet.name` is a string and nothing more: the document says its length and format
 * limits are "not shown". Whatever else refuses a name is the refuser's own rule: the gateway's
 * (src/schema/inputs.ts, NAME_MAX_LENGTH) or the reference service's (src/petstore/names.ts).
 */

/** `GET /pets/{petId}` is deprecated and removed on this day (the contract's Versioning section). */
export const PET_SUNSET = new Date('2030-12-05T00:00:00Z');

/** PET_SUNSET as a day, as the contract and the schema's deprecation reason write it. */
export const PET_SUNSET_DAY = PET_SUNSET.toISOString().slice(0, 10);

/** PET_SUNSET as the HTTP `Sunset` header writes it (RFC 8594: an HTTP-date). */
export const PET_SUNSET_HTTP = PET_SUNSET.toUTCString();

/**
 * When `GET /pets/{petId}` was deprecated, as the reference service's `Deprecation` header says it
 * (RFC 9745: `@` and Unix seconds). The contract names the sunset only; this day is the reference
 * service's.
 */
export const GET_PET_DEPRECATED = '@1764892800';
