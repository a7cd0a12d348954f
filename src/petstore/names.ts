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

/**
 * Combining marks allowed in a row: Unicode's own bound on a combining sequence (UAX #15's
 * Stream-Safe Text Format, 30 non-starters). No language's text needs more; a longer run is a
 * flood that paints over the lines above and below wherever the name is listed.
 */
export const MAX_MARKS_IN_A_ROW = 30;

/** C0 controls, DEL and C1 controls. */
const CONTROL = /\p{Cc}/u;
/** Anything that shows: not whitespace, not a character drawn as nothing, not a mark on its own. */
const VISIBLE = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\p{M}\p{Cc}]/u;
const MARK_FLOOD = new RegExp(`\\p{M}{${MAX_MARKS_IN_A_ROW + 1}}`, 'u');

/**
 * Why the reference service refuses a trimmed name of the right length, or undefined when it takes
 * it. A name is one line of text people read: control characters (NUL cuts it short in C clients,
 * ESC starts terminal sequences in whatever prints it, a line break splits a log line) are refused,
 * and so is a name nothing of which shows (only zero-width or ignorable characters), for the reason
 * a blank one is: no one could see it or tell it from another. Joiners and marks inside a visible
 * name stay: emoji sequences and many scripts need them.
 */
export function referenceNameProblem(trimmed: string): string | undefined {
  if (CONTROL.test(trimmed))
    return '"name" must not contain control characters (U+0000–U+001F, U+007F–U+009F)';
  if (!VISIBLE.test(trimmed)) return '"name" must contain at least one visible character';
  if (MARK_FLOOD.test(trimmed)) {
    return `"name" must not have more than ${MAX_MARKS_IN_A_ROW} combining marks in a row`;
  }
  return undefined;
}
