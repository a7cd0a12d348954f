import type { CodegenConfig } from '@graphql-codegen/cli';

// The app's typed operations, from the gateway's committed SDL (no running gateway needed).
// Documents live beside the code that uses them: every graphql(`…`) call in src/.
const config: CodegenConfig = {
  schema: '../../schema/schema.graphql',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**'],
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: {
        fragmentMasking: false,
        // persisted-documents.json: the manifest a gateway with PERSISTED_OPERATIONS=require loads.
        persistedDocuments: { hashAlgorithm: 'sha256' },
      },
      // IDs are 64-bit integers sent as strings: a JS number would round them past 2^53.
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { ID: 'string' } },
    },
  },
  ignoreNoDocuments: true,
};

export default config;
