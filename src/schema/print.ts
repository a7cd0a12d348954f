// Writes schema/schema.graphql and schema/subgraph.graphql from the code (npm run schema:print). The
// test suite fails when a committed file differs, so a schema change is always a reviewed diff.
import { writeFileSync } from 'node:fs';
import { schema } from './index.ts';
import { printSdl } from './sdl.ts';
import { subgraph } from './subgraph.ts';

writeFileSync(new URL('../../schema/schema.graphql', import.meta.url), `${printSdl(schema)}\n`);
writeFileSync(new URL('../../schema/subgraph.graphql', import.meta.url), `${subgraph().sdl}\n`);
