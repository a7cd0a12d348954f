import SchemaBuilder from '@pothos/core';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import type { PetDto } from '../upstream/bodies.ts';
import type { Context } from './context.ts';
import type { CostDirectiveTypes } from './cost.ts';

export const builder = new SchemaBuilder<{
  Context: Context;
  Objects: { Pet: PetDto };
  // IDs are int64 decimal strings end to end; graphql-js always hands ID inputs over as strings.
  Scalars: { ID: { Input: string; Output: string } };
  DefaultFieldNullability: false;
  // The GraphQL cost directives (schema/cost.ts): what each field weighs, said in the schema.
  Directives: CostDirectiveTypes;
}>({
  defaultFieldNullability: false,
  // Federation only adds `@key` metadata (and the directives plugin its AST) to the types: the
  // public schema prints and introspects the same with it. `toSubGraphSchema` is what uses them.
  plugins: [DirectivePlugin, FederationPlugin],
});
