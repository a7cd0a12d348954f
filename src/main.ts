import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { ConfigError } from './config/env-values.ts';
import { type Config, loadConfig } from './config.ts';
import {
  aggregateWorkerMetrics,
  askPrimaryForMetrics,
  shareMetricsWithPrimary,
} from './observability/cluster-metrics.ts';
import { createLogDestination, type LogDestination } from './observability/log-destination.ts';
import { prettyLine, prettyLogs } from './observability/log-format.ts';
import { createLogger } from './observability/logging.ts';
import { createMetrics } from './observability/metrics.ts';
import { jsonLines, type ProcessLines, plainLines } from './observability/process-lines.ts';
import { connectionCloseLines, redisStateLines } from './observability/state-lines.ts';
import { drainOnSignal } from './process/drain.ts';
import { announce, exit, overEmbedded, startEmbedded } from './process/embedded-store.ts';
import { listen, StartupError } from './process/start-up-errors.ts';
import { STARTUP_FAILED, superviseWorkers } from './process/workers.ts';
import { relayAnnouncements } from './stores/cluster-announcements.ts';
import { serveWorkerCounts } from './stores/cluster-counts.ts';
import type { YogaServerOptions } from './yoga/server.ts';

/** How long SIGTERM waits for in-flight operations before closing anyway. */
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * How long an idle keep-alive connection is left open once draining starts: a proxy sending on it
 * meanwhile gets its answer with `Connection: close` (closing it at once would race that request).
 */
const DRAIN_IDLE_GRACE_MS = 1000;

/**
 * How the primary hands a worker the embedded reference service it runs (WORKERS > 1, no
 * UPSTREAM_URL): the service runs once, and every worker points at it.
 */
const EMBEDDED_URL = 'PET_GATEWAY_EMBEDDED_URL';
const EMBEDDED_KEY = 'PET_GATEWAY_EMBEDDED_KEY';
/** The secret every worker names callers by, made by the primary for this run (see GatewayParts). */
const WORKERS_SECRET = 'PET_GATEWAY_WORKERS_SECRET';

/** The soft `ulimit -n` (Linux's /proc); undefined elsewhere, where the default cap applies. */
function fileDescriptorLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** stdout's log: pino's JSON lines, or short ones for a person (LOG_FORMAT). */
function logTo(config: Config): LogDestination {
  return createLogDestination(1, {
    maxBufferBytes: config.logBufferBytes,
    ...(prettyLogs(config.logFormat, process.stdout.isTTY === true) ? { format: prettyLine } : {}),
  });
}

/**
 * The process's own lines (start-up, workers, the drain): log lines with LOG_FORMAT=json, where a
 * program reads stdout; else lines for a person, as `npm start` prints them, even into a pipe.
 * `log` is stdout's log; the primary of workers has none, and makes one only for these lines.
 */
function linesFor(config: Config, log?: { logger: Logger; destination: LogDestination }): ProcessLines {
  if (config.logFormat !== 'json') return plainLines();
  const destination = log?.destination ?? logTo(config);
  return jsonLines(log?.logger ?? createLogger(config.logLevel, destination), () => destination.flushSync());
}

/** A worker's start-up failure goes to the primary, which prints it once for all workers. */
function exitWorker(error: unknown): Promise<never> {
  if (!(error instanceof StartupError)) throw error;
  return new Promise(() => {
    process.send?.({ type: STARTUP_FAILED, message: error.message }, () => process.exit(1));
  });
}

/**
 * WORKERS > 1: this process only supervises. It runs the embedded reference service (once, for
 * every worker), forks the workers, answers their requests for aggregated metrics, and on
 * SIGTERM drains them all and exits 0.
 */
async function runPrimary(config: Config): Promise<void> {
  const lines = linesFor(config);
  const embedded = config.upstreamUrl === undefined ? await startEmbedded(config) : undefined;
  if (config.metrics) aggregateWorkerMetrics();
  if (config.rateLimit || config.costBudget) serveWorkerCounts();
  if (config.live?.store === 'memory') relayAnnouncements();
  const workers = superviseWorkers({
    count: config.workers,
    env: {
      [WORKERS_SECRET]: randomBytes(32).toString('hex'),
      ...(embedded ? { [EMBEDDED_URL]: embedded.url.href, [EMBEDDED_KEY]: embedded.key } : {}),
    },
    say: lines.say,
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    lines.say(`${signal}, finishing in-flight requests in ${config.workers} workers`);
    await workers.stop();
    await embedded?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  let port: number;
  try {
    port = await workers.ready;
  } catch (error) {
    stopping = true;
    await workers.stop();
    await embedded?.close();
    exit(error);
  }
  announce(config, port, embedded?.url ?? (config.upstreamUrl as URL), embedded?.key, lines);
  lines.say(`${config.workers} workers (pids ${workers.pids().join(', ')})`);
}

/**
 * Where this process sends REST calls: UPSTREAM_URL, the embedded reference service its primary
 * runs (a worker), or one it starts itself (no UPSTREAM_URL).
 */
async function upstreamOf(
  config: Config,
  worker: boolean,
): Promise<{ upstreamUrl: URL; embeddedKey: string | undefined; closeEmbedded: () => Promise<void> }> {
  const handed = process.env[EMBEDDED_URL];
  if (worker && handed) {
    return {
      upstreamUrl: new URL(handed),
      embeddedKey: process.env[EMBEDDED_KEY],
      closeEmbedded: async () => {},
    };
  }
  if (config.upstreamUrl !== undefined) {
    return { upstreamUrl: config.upstreamUrl, embeddedKey: undefined, closeEmbedded: async () => {} };
  }
  const embedded = await startEmbedded(config);
  return { upstreamUrl: embedded.url, embeddedKey: embedded.key, closeEmbedded: embedded.close };
}

/** The trusted-documents manifest, read once; a bad file stops start-up with one line. */
async function readPersistedOperations(config: Config): Promise<YogaServerOptions['persistedOperations']> {
  if (config.persistedOperations === 'off' || !config.persistedOperationsFile) return undefined;
  const { loadPersistedDocuments } = await import('./yoga/request/persisted-documents.ts');
  try {
    return {
      mode: config.persistedOperations,
      documents: loadPersistedDocuments(config.persistedOperationsFile),
    };
  } catch (error) {
    console.error(`pet-gateway: PERSISTED_OPERATIONS_FILE: ${(error as Error).message}`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env, { fileDescriptors: fileDescriptorLimit() });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`pet-gateway: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  const persistedOperations = await readPersistedOperations(config);

  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config);
  const worker = cluster.isWorker;

  const { upstreamUrl, embeddedKey, closeEmbedded } = await upstreamOf(config, worker);

  const logDestination = logTo(config);
  const logger = createLogger(config.logLevel, logDestination);
  const lines = linesFor(config, { logger, destination: logDestination });
  const metrics = config.metrics
    ? createMetrics(worker ? { exposition: askPrimaryForMetrics() } : {})
    : undefined;
  if (worker && metrics) shareMetricsWithPrimary(metrics.registry);
  metrics?.watchLog(logDestination);
  // Loaded only when configured: the OpenTelemetry SDK and exporter add tens of MB of RSS at start.
  const tracing = config.otlpEndpoint
    ? (await import('./observability/tracing.ts')).createTracing({ exporter: config.otlpEndpoint })
    : undefined;
  let stopping = false;
  // Imported once the settings are known good, and never by a primary: Yoga, Pothos and graphql
  // are most of a start's second, which a refused setting or a process that serves no request
  // need not pay.
  const { composeGateway } = await import('./gateway.ts');
  const gateway = composeGateway(embeddedKey ? overEmbedded(config) : config, {
    upstreamUrl,
    logger,
    ...(metrics ? { metrics } : {}),
    ...(tracing ? { tracing } : {}),
    ...(persistedOperations ? { persistedOperations } : {}),
    ...(embeddedKey ? { graphiqlAuthorization: `Bearer ${embeddedKey}` } : {}),
    ...(worker && process.env[WORKERS_SECRET] ? { workersSecret: process.env[WORKERS_SECRET] } : {}),
    draining: () => stopping,
    onRedisState: redisStateLines(logger, config),
    onConnectionClose: connectionCloseLines(logger, config.maxConnections),
  });
  const { server } = gateway;

  await listen(server, config.port, config.host).catch(worker ? exitWorker : exit);
  if (!worker) {
    const address = server.address();
    announce(
      config,
      typeof address === 'object' && address ? address.port : config.port,
      upstreamUrl,
      embeddedKey,
      lines,
    );
  }

  const stop = drainOnSignal({
    server,
    timeoutMs: DRAIN_TIMEOUT_MS,
    idleGraceMs: DRAIN_IDLE_GRACE_MS,
    // In a worker the primary has already said so, once for all of them.
    ...(worker ? {} : { say: lines.say }),
    onStart: () => {
      stopping = true;
      // Not awaited: the listener drains meanwhile. Live lists end now; an operation running over
      // a WebSocket gets the window an HTTP request gets, less the second its socket has to close.
      void gateway.endStreams(DRAIN_TIMEOUT_MS - 1500);
    },
    closing: [gateway.close, closeEmbedded, async () => tracing?.shutdown()],
    // A stalled log reader does not hold the exit past this.
    flush: () => logDestination.flushWithin(2000),
  });
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A worker whose primary is gone (killed outright) can no longer be handed connections.
  if (worker) process.on('disconnect', () => void stop('primary gone'));
}

await main();
