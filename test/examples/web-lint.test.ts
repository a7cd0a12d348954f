// @tier slow: runs the example's lint as a process

import { readFileSync } from 'node:fs';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// examples/web's lint (run by npm test) must be able to fail: a document that uses the deprecated
// pet(id) is refused by @graphql-eslint's no-deprecated, naming the field.

const EXAMPLE = new URL('../../examples/web/', import.meta.url).pathname;

describe('examples/web lint', () => {
  it('names the deprecated pet(id) in a document, and passes the example as it is', async () => {
    const eslint = new ESLint({ cwd: EXAMPLE });
    const operations = readFileSync(`${EXAMPLE}src/operations.ts`, 'utf8');
    const [clean] = await eslint.lintText(operations, { filePath: `${EXAMPLE}src/operations.ts` });
    expect(clean?.messages).toEqual([]);

    const withPet = `${operations}
export const OnePet = graphql(\`
  query OnePet($id: ID!) {
    pet(id: $id) {
      name
    }
  }
\`);
`;
    const [linted] = await eslint.lintText(withPet, { filePath: `${EXAMPLE}src/operations.ts` });
    expect(linted?.messages.map((m) => [m.ruleId, m.message.split(' (reason')[0]])).toEqual([
      ['@graphql-eslint/no-deprecated', 'Field "pet" is marked as deprecated in your GraphQL schema'],
    ]);
  });
});
