/** Characters of a caller's operation name kept in spans, log lines and metric labels. */
export const MAX_OPERATION_NAME = 64;

/**
 * Bounds a label's values: only GraphQL-name-shaped text up to 64 characters, and at most `max`
 * distinct values, after which everything new is `other`. Operation and client names come from
 * callers, and an unbounded label set is a denial of service on the metrics backend.
 */
export function createLabelBudget(
  max: number,
): (value: string | undefined | null, fallback?: string) => string {
  const seen = new Set<string>();
  return (value, fallback = 'anonymous') => {
    if (!value) return fallback;
    if (!/^[A-Za-z_][\w.-]{0,63}$/.test(value)) return 'invalid';
    if (seen.has(value)) return value;
    if (seen.size >= max) return 'other';
    seen.add(value);
    return value;
  };
}
