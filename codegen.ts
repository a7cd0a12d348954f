import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed operations for the tests (and any example client) from the committed SDL. The test command
// runs `graphql-codegen --check`, so the generated files never drift from schema/schema.graphql.
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  // The project's own operations; the hardening corpus holds invalid documents on purpose.
  documents: ['test/support/operations.ts'],
  generates: {
    'test/generated/': {
      preset: 'client',
      // persisted-documents.json: the manifest a gateway in PERSISTED_OPERATIONS=allow|require mode loads.
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { ID: 'string' } },
    },
  },
  ignoreNoDocuments: true,
  importExtension: '.ts',
};

export default config;
