/**
 * JSON with exact int64: integer literals are parsed to `bigint` (from the reviver's `source`, never
 * through a double) and `bigint`s are written back as integer literals with `JSON.rawJSON`.
 */

// Node 24 has both; TypeScript's es2024 lib does not describe them yet.
interface ReviverContext {
  source?: string;
}
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

const INTEGER_LITERAL = /^-?\d+$/;

/** Parses JSON text; every integer literal becomes a `bigint`, other numbers stay `number`. Throws SyntaxError. */
export function parseJson(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: ReviverContext): unknown => {
    if (typeof value === 'number' && context?.source !== undefined && INTEGER_LITERAL.test(context.source)) {
      return BigInt(context.source);
    }
    return value;
  };
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
}

/** Serialises a value; `bigint`s are written as exact integer literals. */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v));
}
