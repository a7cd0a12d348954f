import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import type { ProcessLines } from '../observability/process-lines.ts';
import { REFERENCE_NAME } from '../petstore/names.ts';
import { petstoreDbError, StartupError } from './start-up-errors.ts';

/*
 * What the process says and starts besides the gateway: the embedded reference service (no
 * UPSTREAM_URL) and the start-up lines.
 */

/** Ends start-up with the error's one line, as a bad configuration value does. */
export function exit(error: unknown): never {
  if (!(error instanceof StartupError)) throw error;
  console.error(`pet-gateway: ${error.message}`);
  process.exit(1);
}

export interface Embedded {
  url: URL;
  key: string;
  close(): Promise<void>;
}

/**
 * No upstream configured: run the reference service beside the gateway so `npm start` works out
 * of the box. A key made for this process is printed and prefilled in GraphiQL.
 */
export async function startEmbedded(config: Config): Promise<Embedded> {
  const { startPetstore } = await import('../petstore/server.ts');
  const key = config.petstoreApiKey ?? `dev-${randomBytes(18).toString('base64url')}`;
  try {
    const petstore = await startPetstore({ dbPath: config.petstoreDb, apiKey: key, port: 0 });
    return { url: new URL(petstore.url), key, close: () => petstore.close() };
  } catch (error) {
    exit(petstoreDbError(config.petstoreDb, error));
  }
}

/**
 * The configuration the gateway runs with over the embedded reference service: that service's name
 * maximum unless NAME_MAX_LENGTH set one, so a name it would refuse is refused before any call, as
 * an input error pinned to the field a form can show.
 */
export function overEmbedded(config: Config): Config {
  if (config.limits.nameMaxLength !== undefined) return config;
  return Object.freeze({
    ...config,
    limits: Object.freeze({ ...config.limits, nameMaxLength: REFERENCE_NAME.max }),
  });
}

/** The start-up lines: where GraphQL is, which upstream, the embedded key. */
export function announce(
  config: Config,
  port: number,
  upstreamUrl: URL,
  embeddedKey: string | undefined,
  lines: ProcessLines,
): void {
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const served = config.graphiql ? 'GraphQL and GraphiQL' : 'GraphQL';
  lines.say(`${served} at http://${shownHost}:${port}/graphql`);
  if (embeddedKey) {
    lines.say(`no UPSTREAM_URL, serving the reference animal store at ${upstreamUrl.href}`);
    // A key the user chose is theirs: said to be in use, never echoed (logs get shipped).
    lines.say(
      `API key for this run: ${config.petstoreApiKey ? 'the PETSTORE_API_KEY you set (not printed)' : embeddedKey}`,
    );
    // A line a shell takes as it is (the key is base64url: nothing to quote), so the curl examples'
    // $KEY is one paste away.
    if (!config.petstoreApiKey)
      lines.paste(`export KEY=${embeddedKey}  # paste into the shell you send requests from`);
  } else {
    lines.say(`upstream ${upstreamUrl.href}`);
  }
  // Where a count lives: Redis, the primary shared by the workers, or this process.
  const where = (store: 'memory' | 'redis') =>
    store === 'redis' && config.redisUrl
      ? `Redis at ${config.redisUrl.host}`
      : config.workers > 1
        ? `memory, counted across the ${config.workers} workers`
        : 'memory';
  if (config.rateLimit) {
    const { perMinute, store } = config.rateLimit;
    lines.say(`rate limit ${perMinute} requests per API key per minute (${where(store)})`);
  }
  if (config.costBudget) {
    const { perMinute, store } = config.costBudget;
    lines.say(`cost budget ${perMinute} points per caller per minute (${where(store)})`);
  }
  if (config.responseCache !== 'off') {
    const where = config.redisUrl ? ` at ${config.redisUrl.host}` : '';
    lines.say(`response cache ${config.responseCache}${where}, ${config.responseCacheTtlMs} ms`);
  }
}
