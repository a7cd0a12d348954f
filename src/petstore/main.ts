import { parseArgs } from 'node:util';
import { createApiKey } from './keys.ts';
import { startPetstore } from './server.ts';
import { openStorage } from './storage.ts';

/**
 * Entry of `npm run petstore`: the only file that reads process.env and handles signals.
 *   npm run petstore                                  serve (PORT, HOST, PETSTORE_DB, PETSTORE_API_KEY)
 *   npm run petstore -- keys create --account NAME    create the account if needed, print a new key, exit
 */

const DEFAULT_DB = 'data/petstore.db';

function fail(message: string): never {
  console.error(`petstore: ${message}`);
  process.exit(2);
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 8080;
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(port >= 0 && port <= 65535))
    fail(`PORT must be an integer from 0 to 65535, got ${JSON.stringify(raw)}`);
  return port;
}

/** One line for what stopped the service from starting: an operator needs the variable, not a stack. */
function startFailure(error: NodeJS.ErrnoException, port: number, host: string, dbPath: string): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use: set PORT to another port (PORT=0 picks a free one)`;
    case 'EACCES':
      return `not allowed to listen on port ${port}: set PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
    case 'EINVAL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST ${host} is not an address of this machine: use 127.0.0.1 or 0.0.0.0`;
    case 'ERR_SQLITE_ERROR':
      return `PETSTORE_DB ${dbPath} cannot be opened (${error.message}): use a file in a writable directory, or :memory:`;
    default:
      return `cannot start: ${error.message}`;
  }
}

function keysCommand(args: string[], dbPath: string): void {
  const usage = 'usage: npm run petstore -- keys create --account NAME';
  let parsed: { values: { account?: string | undefined }; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { account: { type: 'string' } }, allowPositionals: true });
  } catch (error) {
    fail(`${(error as Error).message}\n${usage}`);
  }
  const account = parsed.values.account?.trim();
  if (parsed.positionals[0] !== 'create' || parsed.positionals.length !== 1 || !account) fail(usage);
  const storage = openStorage(dbPath);
  try {
    const key = createApiKey(storage, account);
    console.log(`Created an API key for account "${account}" (shown once, stored hashed):`);
    console.log(key);
  } finally {
    storage.close();
  }
}

async function serve(dbPath: string): Promise<void> {
  const apiKey = process.env.PETSTORE_API_KEY || undefined;
  const port = parsePort(process.env.PORT);
  const host = process.env.HOST || '127.0.0.1';
  let petstore: Awaited<ReturnType<typeof startPetstore>>;
  try {
    petstore = await startPetstore({
      dbPath,
      port,
      host,
      log: (line) => console.log(line),
      ...(apiKey === undefined ? {} : { apiKey }),
    });
  } catch (error) {
    fail(startFailure(error as NodeJS.ErrnoException, port, host, dbPath));
  }
  if (petstore.devKey !== undefined) {
    console.log(`Created a development API key (shown once, stored hashed): ${petstore.devKey}`);
  }
  console.log(`petstore listening on ${petstore.url} (database ${dbPath})`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`petstore: ${signal} received, finishing in-flight requests`);
    petstore.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('petstore: close failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

const dbPath = process.env.PETSTORE_DB || DEFAULT_DB;
const [command, ...rest] = process.argv.slice(2);
if (command === 'keys') {
  keysCommand(rest, dbPath);
} else if (command === undefined) {
  await serve(dbPath);
} else {
  fail(`unknown command ${JSON.stringify(command)}; usage: npm run petstore [-- keys create --account NAME]`);
}
