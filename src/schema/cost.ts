import { complexityFromQuery } from '@pothos/plugin-complexity';
import { type DocumentNode, type GraphQLResolveInfo, Kind } from 'graphql';
import type { Context } from './context.ts';
import { costLimitExceeded } from './errors.ts';

/**
 * Refuses the whole operation when it costs more than MAX_COST, priced as the complexity plugin
 * prices it for the Pothos root fields: for the fields the plugin does not price before they run
 * (a subscription's, which resolves only after its list has opened; `_entities`, which it does not
 * wrap). The plugin coerces the variables itself, so it gets the caller's own (`ctx.variables`):
 * `info.variableValues` are already coerced (an enum holds its internal value, the contract's
 * `sold`), and coercing them again refused a subscription that passed its status as a variable.
 */
export function refuseOverCost(ctx: Context, info: GraphQLResolveInfo): void {
  const document: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [info.operation, ...Object.values(info.fragments)],
  };
  const { complexity } = complexityFromQuery(document, {
    schema: info.schema,
    ctx,
    variables: ctx.variables,
  });
  if (complexity > ctx.maxCost) throw costLimitExceeded(complexity, ctx.maxCost);
}
