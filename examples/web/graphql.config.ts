import type { IGraphQLConfig } from 'graphql-config';

// Read by the editor's GraphQL extension (validation, completion, strike-through of deprecated
// fields such as pet(id)) and by @graphql-eslint: the same schema and documents codegen reads.
const config: IGraphQLConfig = {
  schema: '../../schema/schema.graphql',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**'],
};

export default config;
