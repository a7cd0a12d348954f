// @tier unit

import type { ASTVisitor } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.ts';
import { useValidationByShape } from '../../src/yoga/validation/by-shape.ts';

describe('validation once per shape', () => {
  /** A Yoga with one more rule, which counts the documents it validates. */
  function counted() {
    const seen = { validated: 0 };
    const countingRule = (): ASTVisitor => {
      seen.validated++;
      return {};
    };
    const counting: Plugin = { onValidate: ({ addValidationRule }) => addValidationRule(countingRule) };
    const yoga = createYoga({
      schema,
      plugins: [counting, useValidationByShape()],
      logging: false,
    });
    const ask = async (query: string) => {
      const response = await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query }),
      });
      return {
        status: response.status,
        body: (await response.json()) as { errors?: Array<{ message: string }> },
      };
    };
    return { seen, ask };
  }

  it('validates a new alias of a valid shape no more, and still refuses every invalid document', async () => {
    const { seen, ask } = counted();
    await ask('{ first: __typename }');
    await ask('{ second: __typename }');
    await ask('{ third: __typename }');
    expect(seen.validated).toBe(1);
    // An invalid shape is validated each time it comes with new names: only valid ones are remembered.
    for (const alias of ['a', 'b']) {
      const refused = await ask(`{ ${alias}: __typename ${alias}: __schema { queryType { name } } }`);
      expect(refused.status).toBe(400);
      expect(refused.body.errors?.[0]?.message).toMatch(new RegExp(`"${alias}" conflict`));
    }
    expect(seen.validated).toBe(3);
    const unknown = await ask('{ first: nothing }');
    expect(unknown.status).toBe(400);
  });
});
