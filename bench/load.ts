/**
 * The load generators behind one interface: wrk when it is installed, autocannon (in this process)
 * otherwise, and autocannon for a fixed-rate workload in any case: wrk has no rate limit, and wrk2,
 * which has one, is not packaged in Debian.
 */
import autocannon from 'autocannon';
import { bodyText, headersOf, type RequestSpec } from './workloads.ts';
import { runWrk } from './wrk.ts';

export type GeneratorName = 'wrk' | 'autocannon';

/** One run's figures, whichever generator made them. */
export interface LoadResult {
  generator: GeneratorName;
  /** Completed requests, whatever their status. */
  requests: number;
  /** How long the load ran. */
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  non2xx: number;
  /** 2xx answers whose body carried a GraphQL `errors` entry. */
  graphqlErrors: number;
  /** CPU the generator itself used: taken from the targets on a machine with few cores. */
  generatorCpuMicros: number;
}

/** One run to make: `spec` sent to `url` for `seconds`, over `connections`. */
export interface Load {
  url: string;
  spec: RequestSpec;
  seconds: number;
  connections: number;
  /** Requests/s over all connections; unset = as fast as the target answers. */
  rate?: number;
  /** The bearer keys the requests take in turn (see apiKeys). */
  keys: readonly string[];
}

/**
 * Runs one load: with wrk (given its path) unless the load has a fixed rate, which only autocannon
 * can offer.
 */
export function runLoad(wrk: string | undefined, load: Load): Promise<LoadResult> {
  return wrk !== undefined && load.rate === undefined ? runWrk(wrk, load) : runAutocannon(load);
}

let tokenCounter = 0;

/** A body for one request outside the load (the bench's checks), unique when the spec's bodies are. */
export function nextBody(spec: RequestSpec): string | undefined {
  return bodyText(spec, `c${tokenCounter++}`);
}

async function runAutocannon(load: Load): Promise<LoadResult> {
  const { spec, keys } = load;
  const [firstKey = ''] = keys;
  // A request built per request only when something in it changes: one key and a fixed body keep
  // autocannon's prebuilt request, as before keys rotated.
  const perRequest = keys.length > 1 || typeof spec.body === 'object';
  const headers = keys.map((key) => headersOf(spec, key));
  let turn = 0;
  const cpuBefore = process.cpuUsage();
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.seconds,
    ...(load.rate === undefined ? {} : { overallRate: load.rate }),
    method: spec.method,
    headers: headersOf(spec, firstKey),
    ...(typeof spec.body === 'string' ? { body: spec.body } : {}),
    ...(perRequest
      ? {
          requests: [
            {
              setupRequest: (req) => ({
                ...req,
                headers: headers[turn++ % headers.length],
                ...(typeof spec.body === 'object' ? { body: nextBody(spec) } : {}),
              }),
            },
          ],
        }
      : {}),
    // A 200 carrying GraphQL errors is not a success; REST bodies never contain this key.
    verifyBody: (text) => !text.includes('"errors"'),
  });
  // The whole bench process: autocannon is all it does while the load runs.
  const cpu = process.cpuUsage(cpuBefore);
  return {
    generator: 'autocannon',
    requests: result.requests.total,
    seconds: result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    graphqlErrors: result.mismatches,
    generatorCpuMicros: cpu.user + cpu.system,
  };
}
