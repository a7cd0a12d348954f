/**
 * `node bench/parse.ts`: what reading one `GET /pets` body of 20 pets costs, with small ids and with
 * snowflake-style ids beyond 2^53: the gateway's parsePets ("new") against the reviver-based exact
 * parse it had before (test/support/int64-oracle.ts, "old"). About five seconds. The cases take turns
 * in short rounds so that a busy machine slows them alike; each figure is the median round, in ns per
 * body, body to PetDto[] (JSON.parse alone where it says so).
 */
import { deepStrictEqual } from 'node:assert';
import { parsePets } from '../src/upstream/bodies.ts';
import { oracleParsePets } from '../test/support/int64-oracle.ts';

const PETS = 20n;
const ROUNDS = 25;
const ROUND_MS = 30;

function body(firstId: bigint): string {
  const pets: string[] = [];
  for (let n = 0n; n < PETS; n++) {
    const status = ['available', 'pending', 'sold'][Number(n % 3n)];
    const categoryId = firstId / 1000n + n;
    pets.push(
      `{"id":${firstId + n * 4_194_304n},"name":"pet-${n}","categoryId":${categoryId},"status":"${status}"}`,
    );
  }
  return `[${pets.join(',')}]`;
}

const small = body(1n);
// Snowflake-style: 19 digits, ~2^60.
const big = body(1_234_567_890_123_456_789n);

const cases: Array<{ name: string; parse: (text: string) => unknown; text: string; rounds: number[] }> = [
  { name: 'JSON.parse, small ids', parse: JSON.parse, text: small, rounds: [] },
  { name: 'old exact parse, big ids', parse: oracleParsePets, text: big, rounds: [] },
  { name: 'new parse, big ids', parse: parsePets, text: big, rounds: [] },
  { name: 'new parse, small ids', parse: parsePets, text: small, rounds: [] },
  { name: 'old parse, small ids', parse: oracleParsePets, text: small, rounds: [] },
  // What a plain parse of the same text costs, though it rounds every id.
  { name: 'JSON.parse, big ids', parse: JSON.parse, text: big, rounds: [] },
];

// Timing a parse that answers differently would mean nothing.
deepStrictEqual(parsePets(big), oracleParsePets(big));
deepStrictEqual(parsePets(small), oracleParsePets(small));

let sink = 0;
for (const { parse, text } of cases) {
  for (let i = 0; i < 3000; i++) sink ^= (parse(text) as unknown[]).length;
}
for (let round = 0; round < ROUNDS; round++) {
  for (const { parse, text, rounds } of cases) {
    let calls = 0;
    const start = performance.now();
    let now = start;
    while (now - start < ROUND_MS) {
      for (let i = 0; i < 50; i++) sink ^= (parse(text) as unknown[]).length;
      calls += 50;
      now = performance.now();
    }
    rounds.push(((now - start) * 1e6) / calls);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;
const [plain, oldBig, newBig] = cases.map(({ rounds }) => median(rounds));
console.log(`${PETS} pets: small ids ${small.length} B, big ids ${big.length} B; node ${process.version}`);
for (const { name, rounds } of cases) {
  const ns = median(rounds);
  console.log(
    `${name.padEnd(26)} ${String(Math.round(ns)).padStart(6)} ns  ${(ns / (plain ?? ns)).toFixed(2)}× JSON.parse`,
  );
}
console.log(
  `big ids: the new parse takes ${((newBig ?? 0) / (oldBig ?? 1)).toFixed(2)} of the old one's time`,
);
if (sink === -1) console.log('');
