/**
 * `npm run bench:live`: N SSE subscribers (`subscription { pets }`, or with `--kind query` the same
 * list as a `query … @live`, run again per poll) over M keys held open against one
 * gateway process for a fixed time, the static upstream behind it. Reported: the gateway's RSS before
 * and with the streams open (and per 1,000 streams), its CPU per second while they are held, the
 * upstream calls per second the polls make, and the events delivered. Flags: --streams (2000),
 * --keys (200), --seconds (20), --poll-ms (5000), --kind (list).
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { startTarget, TARGET } from './processes.ts';
import { numberOption } from './settings.ts';
import { apiKeys } from './workloads.ts';

const text = { type: 'string' } as const;
const { values } = parseArgs({
  options: { streams: text, keys: text, seconds: text, 'poll-ms': text, kind: text },
});
const KIND = values.kind ?? 'list';
if (KIND !== 'list' && KIND !== 'query') throw new Error(`--kind must be list or query, not ${KIND}`);
const STREAMS = numberOption('streams', values.streams, 2000);
const KEYS = numberOption('keys', values.keys, 200);
const SECONDS = numberOption('seconds', values.seconds, 20);
const POLL_MS = numberOption('poll-ms', values['poll-ms'], 5000);
const keys = apiKeys(KEYS);

const upstream = await startTarget(
  'static-upstream',
  TARGET,
  { BENCH_API_KEYS: keys.join(',') },
  {
    args: ['static-upstream'],
  },
);
const gateway = await startTarget(
  'gateway',
  TARGET,
  {
    UPSTREAM_URL: upstream.url,
    LOG_LEVEL: 'warn',
    LIVE_POLL_MS: String(POLL_MS),
    // Every stream of the run on one instance, each key within its bound.
    LIVE_MAX_STREAMS: String(STREAMS),
    LIVE_MAX_PER_KEY: String(Math.ceil(STREAMS / KEYS)),
    MAX_CONNECTIONS: String(STREAMS + 100),
    MAX_CONNECTIONS_PER_ADDRESS: String(STREAMS + 100),
  },
  { execArgv: ['--max-semi-space-size=16'], args: ['gateway'] },
);

const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
let events = 0;
let firstEvents = 0;
const requests: http.ClientRequest[] = [];
/** Opens one stream; resolves at its first event. Limits vary per stream so the polls are distinct per key. */
function open(index: number): Promise<void> {
  const list = `pets(limit: ${1 + Math.floor(index / KEYS)}) { id name }`;
  const body = JSON.stringify({
    query: KIND === 'list' ? `subscription { ${list} }` : `query @live { ${list} }`,
  });
  const headers = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    authorization: `Bearer ${keys[index % KEYS]}`,
    'content-length': Buffer.byteLength(body),
  };
  return new Promise((resolve, reject) => {
    const request = http.request(gateway.url, { method: 'POST', agent, headers }, (response) => {
      let first = true;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const count = chunk.split('event: next').length - 1;
        events += count;
        if (first && count > 0) {
          first = false;
          firstEvents++;
          resolve();
        }
      });
      response.on('error', () => {});
    });
    request.on('error', reject);
    request.end(body);
    requests.push(request);
  });
}

const before = await gateway.stats();
const started = performance.now();
for (let i = 0; i < STREAMS; i += 100) {
  await Promise.all(Array.from({ length: Math.min(100, STREAMS - i) }, (_, j) => open(i + j)));
}
const openSeconds = (performance.now() - started) / 1000;
const held = await gateway.stats();
const cpu0 = await gateway.cpuMicros();
const calls0 = (await upstream.stats()).calls ?? 0;
const events0 = events;
await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
const cpu1 = await gateway.cpuMicros();
const calls1 = (await upstream.stats()).calls ?? 0;
const after = await gateway.stats();
for (const request of requests) request.destroy();

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const perSecond = (count: number) => (count / SECONDS).toFixed(1);
console.log(
  `live: ${STREAMS} SSE streams (${KIND === 'list' ? 'subscription { pets }' : 'query @live'}) over ${KEYS} keys, LIVE_POLL_MS=${POLL_MS}, held ${SECONDS} s; node ${process.version}`,
);
console.log(
  '| streams | keys | open in s | RSS before MB | RSS held MB | RSS per 1,000 streams MB | peak RSS MB | CPU ms/s held | upstream calls/s | events/s held | first events |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
const perThousand = ((held.rss - before.rss) / STREAMS) * 1000;
console.log(
  `| ${STREAMS} | ${KEYS} | ${openSeconds.toFixed(1)} | ${mb(before.rss)} | ${mb(held.rss)} | ${mb(perThousand)} | ${mb(after.peakRss)} | ${perSecond((cpu1 - cpu0) / 1000)} | ${perSecond(calls1 - calls0)} | ${perSecond(events - events0)} | ${firstEvents} |`,
);
await gateway.stop();
await upstream.stop();
process.exit(0);
