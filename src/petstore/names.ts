/**
 * What the reference service takes as a pet's name. The interface document leaves the length and
 * format of `name` open ("not shown"), so these are this service's choices, not the contract's:
 * docs/reference-service.md gives each with its reason, and `schema/openapi.yaml` carries the bounds
 * as an `x-reference-service` note. The tests' upstream answers by the same rules.
 */

/** Unicode code points of the trimmed name. */
export const REFERENCE_NAME = Object.freeze({ min: 1, max: 200 });

/**
 * A name's length as REFERENCE_NAME counts it: code points of the trimmed text, counted no further
 * than `max + 1` (a 1 MB string is not walked to be refused).
 */
export function referenceNameLength(text: string): number {
  let length = 0;
  for (const _ of text.trim()) if (++length > REFERENCE_NAME.max) break;
  return length;
}
