import graphql from '@graphql-eslint/eslint-plugin';

// GraphQL lint only (Biome lints the TypeScript at the repository root): the processor lifts every
// graphql(`…`) document out of src/operations.ts, and no-deprecated names a deprecated field
// (pet(id)) where an operation uses it, with the schema from graphql.config.ts.
export default [
  { files: ['src/operations.ts'], processor: graphql.processor },
  {
    files: ['**/*.graphql'],
    languageOptions: { parser: graphql.parser },
    plugins: { '@graphql-eslint': graphql },
    rules: {
      '@graphql-eslint/no-deprecated': 'error',
      '@graphql-eslint/fields-on-correct-type': 'error',
    },
  },
];
