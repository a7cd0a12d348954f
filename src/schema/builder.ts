import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import type { PetDto } from '../upstream/bodies.ts';
import type { Context } from './context.ts';
import { costLimitExceeded } from './errors.ts';

export const builder = new SchemaBuilder<{
  Context: Context;
  Objects: { Pet: PetDto };
  // IDs are int64 decimal strings end to end; graphql-js always hands ID inputs over as strings.
  Scalars: { ID: { Input: string; Output: string } };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
  // Federation only adds `@key` metadata (and the directives plugin its AST) to the types: the
  // public schema prints and introspects the same with it. `toSubGraphSchema` is what uses them.
  plugins: [ComplexityPlugin, DirectivePlugin, FederationPlugin],
  complexity: {
    // Every field costs 1; a list multiplies its selections by its size (pets by its `limit`), so
    // aliases that multiply large lists are refused before any resolver, hence any upstream call.
    defaultComplexity: 1,
    defaultListMultiplier: 20,
    limit: (ctx) => ({ complexity: ctx.maxCost }),
    // Only the complexity limit is set (depth is graphql-armor's), so this is always a cost error.
    complexityError: (_kind, result) => costLimitExceeded(result.complexity, result.maxComplexity),
  },
});
