// @tier unit

import { type ASTVisitor, parse } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { documentShape } from '../../src/execution/shape.ts';
import { schema } from '../../src/schema/index.ts';
import { useValidationByShape } from '../../src/yoga/validation/by-shape.ts';

const shape = (text: string) => documentShape(parse(text))?.key;

describe('a document’s shape', () => {
  it('is the same for documents that differ only in what their aliases are called', () => {
    expect(shape('{ a: pets(limit: 2) { id } }')).toBe(shape('{ zz_91: pets(limit: 2) { id } }'));
    expect(shape('{ a: pets { x: id y: name } }')).toBe(shape('{ b: pets { p: id q: name } }'));
  });

  it('keeps which fields share a response name, where aliases stand, and everything else', () => {
    const base = shape('{ a: pets(limit: 1) { id } b: pets(limit: 2) { id } }');
    for (const other of [
      // Two response names that are one: invalid where the first is valid.
      '{ a: pets(limit: 1) { id } a: pets(limit: 2) { id } }',
      '{ a: pets(limit: 1) { id } pets(limit: 2) { id } }',
      '{ a: pets(limit: 1) { id } b: pets(limit: 3) { id } }',
      '{ a: pets(limit: 1) { id } b: pets(limit: 2) { name } }',
      'query Q { a: pets(limit: 1) { id } b: pets(limit: 2) { id } }',
    ])
      expect(shape(other), other).not.toBe(base);
    // An alias that is another field's name shares its response name; a new alias does not.
    expect(shape('{ pets { name: id name } }')).not.toBe(shape('{ pets { other: id name } }'));
    expect(shape('{ pets { id } }')).not.toBe(shape('{ pets { a: id } }'));
  });

  it('is none for a document too large to remember', () => {
    const fields = Array.from({ length: 600 }, (_, index) => `f${index}: id`).join(' ');
    expect(shape(`{ pets { ${fields} } }`)).toBeUndefined();
  });
});

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
