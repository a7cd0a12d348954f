// Writes schema/schema.graphql from the code (npm run schema:print). The test suite fails when the
// committed file differs, so a schema change is always a reviewed diff.
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { schema } from './index.ts';

writeFileSync(new URL('../../schema/schema.graphql', import.meta.url), `${printSchema(schema)}\n`);
