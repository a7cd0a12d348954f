// @tier unit

import { describe, expect, it } from 'vitest';
import { cpuList } from '../../bench/pinning.ts';
import { formatGoals, formatTable, type Ratio, type Summary } from '../../bench/report.ts';
import { listedPets } from '../../bench/static-upstream.ts';
import { WORKLOADS } from '../../bench/workloads.ts';

// The bench's own rules, without running it: CPU lists, answer checks, the table and the goals.

describe('pinning', () => {
  it('reads taskset CPU lists', () => {
    expect(cpuList('0-3,6')).toEqual([0, 1, 2, 3, 6]);
    expect(cpuList(' 1\n')).toEqual([1]);
    expect(cpuList('')).toEqual([]);
  });
});

describe('list20-bigids', () => {
  const workload = WORKLOADS.find((w) => w.name === 'list20-bigids');
  const pets = listedPets('int64', 20);
  // What a hop that parsed the ids into doubles would send: the nearest double, printed.
  const rounded = (id: string) => String(Number(id));
  /** The check passes the answer with every id as written, and fails it with the ids rounded. */
  const exactOnly = (
    check: ((status: number, body: string) => string | undefined) | undefined,
    answer: (id: (text: string) => string) => string,
  ) => {
    expect(
      check?.(
        200,
        answer((id) => id),
      ),
    ).toBeUndefined();
    expect(check?.(200, answer(rounded))).toMatch(/ids differ/);
  };

  it('accepts the ids exactly and rejects them rounded, in the gateway answer', () => {
    const answer = (id: (text: string) => string) =>
      JSON.stringify({
        data: {
          pets: pets.map((p) => ({
            id: id(p.id),
            name: p.name,
            categoryId: p.categoryId,
            status: p.status.toUpperCase(),
          })),
        },
      });
    const check = workload?.targets.gateway?.check;
    exactOnly(check, answer);
  });

  it('reads int64 numbers in a REST answer from their source text', () => {
    const answer = (id: (text: string) => string) =>
      `[${pets.map((p) => `{"id":${id(p.id)},"name":"${p.name}","categoryId":${p.categoryId},"status":"${p.status}"}`).join(',')}]`;
    const check = workload?.targets['bare-proxy']?.check;
    exactOnly(check, answer);
  });
});

describe('the report', () => {
  const summary = (workload: string, target: Summary['target'], extra: Partial<Summary> = {}): Summary => ({
    workload,
    upstream: 'static',
    target,
    generator: 'wrk',
    rps: 1000,
    p50Ms: 1,
    p99Ms: 2,
    errors: 0,
    non2xx: 0,
    graphqlErrors: 0,
    cpuMicrosPerRequest: 100,
    upstreamCpuMicrosPerRequest: 20,
    generatorCpuMicrosPerRequest: 10,
    othersCpuShare: 0,
    peakRssBytes: 200 * 1024 * 1024,
    upstreamKeys: 200,
    upstreamCallsPerOp: 1,
    wrongAnswer: undefined,
    ...extra,
  });
  const ratio = (
    workload: string,
    numerator: string,
    denominator: string,
    metric: Ratio['metric'],
    median: number,
  ) => ({ workload, numerator, denominator, metric, median, rounds: [median] }) satisfies Ratio;

  it('flags a peer that answered wrongly in the table and in the goals judged against it', () => {
    const wrong = "ids differ from the upstream's: 1790417263409159936…";
    const summaries = [
      summary('list20-bigids', 'gateway'),
      summary('list20-bigids', 'tailcall', { wrongAnswer: wrong }),
    ];
    const table = formatTable(summaries);
    expect(table).toMatch(/^\| list20-bigids \| static \| tailcall \|.* \| WRONG \|$/m);
    expect(table).toMatch(/^\| list20-bigids \| static \| gateway \|.* \| ok \|$/m);
    expect(table).toContain(`- list20-bigids tailcall answered wrongly: ${wrong}`);
    const goals = formatGoals([ratio('list20-bigids', 'gateway', 'tailcall', 'cpu', 1.2)], summaries);
    expect(goals).toContain(
      "- list20-bigids: gateway CPU/req 1.20× tailcall's (reported, no goal) (tailcall answered wrongly: see the table)",
    );
  });

  it('judges new documents against the --baseline checkout and a batch against one list20', () => {
    const goals = formatGoals(
      [
        ratio('cold', 'gateway', 'gateway-baseline', 'cpu', 0.5),
        ratio('batch5', 'gateway batch', 'gateway single', 'cpu', 5.5),
      ],
      [],
    );
    expect(goals).toEqual([
      "- batch5: gateway CPU per batch 5.50× one list20's (goal ≤ 5.00×) FAIL",
      "- cold: gateway CPU/req 0.50× the baseline's on new documents (goal ≤ 0.60×) PASS",
    ]);
  });

  it('judges the goal against hive-mesh, flagged where its answer was wrong', () => {
    const goals = formatGoals(
      [ratio('list20', 'gateway', 'hive-mesh', 'rps', 12)],
      [summary('list20', 'hive-mesh', { wrongAnswer: 'expected 20 pets' })],
    );
    expect(goals).toEqual([
      "- list20: gateway req/s 12.00× hive-mesh's (goal ≥ 10.00×) PASS (hive-mesh answered wrongly: see the table)",
    ]);
  });

  it('judges each goal from the measured value, and leaves out goals whose workloads did not run', () => {
    const goals = formatGoals(
      [
        ratio('list20', 'gateway', 'json-hop', 'cpu', 1.25),
        ratio('list20', 'gateway', 'tailcall', 'cpu', 1.6),
        ratio('list20', 'gateway', 'tailcall', 'rps', 0.79),
        ratio('list20', 'gateway', 'gateway-warn', 'cpu', 1.06),
        ratio('list20', 'gateway', 'hive-mesh', 'rps', 9.99),
        ratio('dedup', 'gateway', 'bare-proxy', 'rps', 0.59),
        ratio('list20-steady', 'gateway', 'bare-proxy', 'p99', 2),
      ],
      [
        summary('list20', 'gateway', { peakRssBytes: 265 * 1024 * 1024 }),
        summary('list20', 'bare-proxy'),
        summary('dedup', 'gateway', { upstreamCallsPerOp: 6, non2xx: 1 }),
      ],
    );
    expect(goals).toEqual([
      "- list20: gateway CPU/req 1.25× json-hop's (goal ≤ 1.25×) PASS",
      "- list20: gateway CPU/req 1.60× tailcall's (reported, no goal)",
      "- list20: gateway req/s 0.79× tailcall's (goal ≥ 0.80×) FAIL",
      "- list20: gateway CPU/req 1.06× gateway-warn's (LOG_LEVEL=warn; goal ≤ 1.05×) FAIL",
      "- list20: gateway req/s 9.99× hive-mesh's (goal ≥ 10.00×) FAIL",
      "- dedup: gateway req/s 0.59× bare-proxy's (goal ≥ 0.60×) FAIL",
      "- list20-steady: gateway p99 2.00× bare-proxy's (goal ≤ 2.00×) PASS",
      "- list20: gateway peak RSS 265 MB (goal ≤ bare-proxy's 200 MB + 48 MB = 248 MB) FAIL",
      '- every workload: gateway errors + non-2xx + GraphQL errors 1 (goal 0) FAIL',
      '- dedup: gateway upstream calls/op 6.00 (goal 5) FAIL',
    ]);
  });
});
