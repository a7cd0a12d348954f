import SchemaBuilder from '@pothos/core';
import type { Context } from '../context.ts';
import type { PetDto } from '../upstream/contract.ts';

export const builder = new SchemaBuilder<{
  Context: Context;
  Objects: { Pet: PetDto };
  // IDs are int64 decimal strings end to end; graphql-js always hands ID inputs over as strings.
  Scalars: { ID: { Input: string; Output: string } };
  DefaultFieldNullability: false;
}>({ defaultFieldNullability: false });
