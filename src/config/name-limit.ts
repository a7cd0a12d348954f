import { integer, nonEmpty } from './env-values.ts';

/**
 * NAME_MAX_LENGTH: the longest `createPet` name the gateway passes on, in Unicode code points after
 * trimming; undefined when unset. The contract states no maximum, so by default the store decides;
 * an operator whose store has one sets it here to refuse before any upstream call.
 */
export function nameMaxLength(env: Record<string, string | undefined>): number | undefined {
  if (nonEmpty(env, 'NAME_MAX_LENGTH') === undefined) return undefined;
  return integer(env, 'NAME_MAX_LENGTH', 0, 1, 1_000_000);
}
