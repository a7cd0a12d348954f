import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import { GraphQLError } from 'graphql';
import type { Context } from '../context.ts';
import type { PetDto } from '../upstream/contract.ts';

export const builder = new SchemaBuilder<{
  Context: Context;
  Objects: { Pet: PetDto };
  // IDs are int64 decimal strings end to end; graphql-js always hands ID inputs over as strings.
  Scalars: { ID: { Input: string; Output: string } };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
  plugins: [ComplexityPlugin],
  complexity: {
    // Every field costs 1; a list multiplies its selections by its size (pets by its `limit`), so
    // aliases that multiply large lists are refused before any resolver, hence any upstream call.
    defaultComplexity: 1,
    defaultListMultiplier: 20,
    limit: (ctx) => ({ complexity: ctx.maxCost }),
    // Only the complexity limit is set (depth is graphql-armor's), so this is always a cost error.
    complexityError: (_kind, result) =>
      new GraphQLError(
        `The operation costs ${result.complexity}, over the limit of ${result.maxComplexity}.`,
        {
          extensions: {
            code: 'COST_LIMIT_EXCEEDED',
            cost: result.complexity,
            limit: result.maxComplexity,
            http: { status: 400 },
          },
        },
      ),
  },
});
