import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { specifiedDirectives } from 'graphql';
import { builder } from './builder.ts';
import { COST_DIRECTIVES } from './cost.ts';
import { GraphQLLiveDirective } from './live.ts';
import './pet.ts';

/**
 * The public schema. `@defer` and `@stream` are part of it (Yoga's defer-stream plugin executes
 * them), so the printed SDL, codegen and editors know them; so are `@live` (live.ts) and the cost
 * directives (cost.ts).
 */
export const schema = builder.toSchema({
  sortSchema: true,
  directives: [
    ...specifiedDirectives,
    GraphQLDeferDirective,
    GraphQLStreamDirective,
    GraphQLLiveDirective,
    ...COST_DIRECTIVES,
  ],
});
