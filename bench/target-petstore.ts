/** Child process: the reference REST service on an in-memory database. Env: BENCH_API_KEY. */
import { startPetstore } from '../src/petstore/server.ts';
import { announce, requireEnv } from './child.ts';

const petstore = await startPetstore({ dbPath: ':memory:', apiKey: requireEnv('BENCH_API_KEY'), port: 0 });
announce(petstore.url);
