// @tier slow: the docs' curl lines against npm start

import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import {
  buildASTSchema,
  buildClientSchema,
  type GraphQLSchema,
  getIntrospectionQuery,
  type IntrospectionQuery,
  lexicographicSortSchema,
  parse,
  print,
  printSchema,
  visit,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { difference, type Example, examples } from './examples.ts';

// Every fenced example of README.md and docs/*.md, run against a gateway started as `npm start`
// starts it (the embedded store, freshly seeded), its shown output compared with what comes back.
// What runs and how blocks pair with their output: test/docs/examples.ts and docs/testing.md.

const ROOT = new URL('../../', import.meta.url);
const read = (page: string) => readFileSync(new URL(page, ROOT), 'utf8');
const PAGES = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const ALL = PAGES.flatMap((page) => examples(page, read(page)));
type Runnable = Extract<Example, { kind: 'curl' | 'start' | 'operation' | 'schema' }>;
const RUNNABLE = ALL.filter((example): example is Runnable =>
  ['curl', 'start', 'operation', 'schema'].includes(example.kind),
);

const CURL = process.env.CURL_PATH ?? '/usr/bin/curl';
const haveCurl = existsSync(CURL);
if (!haveCurl && process.env.CI) throw new Error(`[examples.test] no curl at ${CURL}`);
if (!haveCurl)
  console.warn(`[examples.test] curl examples skipped: no curl at ${CURL} (apt-get install curl)`);

let gateway: StartedGateway;

beforeAll(async () => {
  gateway = await npmStart();
});

afterAll(async () => {
  await gateway?.stop();
});

/** Runs one example against `gateway`; throws, naming the page and line, when it does not hold. */
async function run(example: Runnable, on: StartedGateway): Promise<void> {
  const where = `${example.page}:${example.line}`;
  const compare = (actual: string) => {
    if (!('output' in example) || !example.output) return;
    const problem = difference(example.output, actual);
    if (problem)
      throw new Error(
        `${example.page}:${example.output.line}: the output shown for the example at line ${example.line} is not what the gateway gives (normalised)\n${problem}`,
      );
  };
  switch (example.kind) {
    case 'curl': {
      const script = example.script.replaceAll('http://localhost:4000', on.origin);
      const { stdout } = await promisify(execFile)('sh', ['-e', '-c', script], {
        env: { PATH: `${CURL.replace(/\/curl$/, '')}:${process.env.PATH ?? ''}`, KEY: on.key ?? '' },
        timeout: 20_000,
      }).catch((error: Error) => {
        throw new Error(`${where}: the command failed: ${error.message}`);
      });
      compare(stdout);
      return;
    }
    case 'start': {
      const started = await npmStart(example.env);
      try {
        const shown = example.output?.text.replace(/\n$/, '').split('\n').length ?? 0;
        // The lines after the key's (the `export KEY=` line) may still be on their way.
        await started.waitFor(new RegExp(`^(?:.*\\n){${shown}}`));
        compare(started.lines().slice(0, shown).join('\n'));
      } finally {
        await started.stop();
      }
      return;
    }
    case 'operation': {
      const response = await fetch(`${on.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${on.key}` },
        body: JSON.stringify({ query: example.document }),
      });
      compare(await response.text());
      return;
    }
    case 'schema': {
      const response = await fetch(`${on.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: getIntrospectionQuery() }),
      });
      const { data } = (await response.json()) as { data: IntrospectionQuery };
      const served = comparable(buildClientSchema(data));
      let shown: string;
      try {
        shown = comparable(buildASTSchema(parse(example.sdl)));
      } catch (error) {
        throw new Error(`${where}: the schema shown is not a schema: ${(error as Error).message}`);
      }
      if (served !== shown)
        throw new Error(
          `${where}: the schema shown is not the gateway's (descriptions and order aside)\nshown:\n${shown}\nserved:\n${served}`,
        );
      return;
    }
  }
}

/** A schema's SDL without descriptions, types and fields in a fixed order. */
function comparable(schema: GraphQLSchema): string {
  const document = visit(parse(printSchema(lexicographicSortSchema(schema))), {
    enter(node) {
      if ('description' in node && node.description) return { ...node, description: undefined };
      return undefined;
    },
  });
  return print(document);
}

const label = (example: Runnable) =>
  `${example.page}:${example.line} ${example.kind}${'output' in example && example.output ? ` → line ${example.output.line}` : ''}`;

describe('README.md and docs/: fenced blocks', () => {
  it('every block runs, or says why not (<!-- not-run: reason --> on the line before it)', () => {
    const unmarked = ALL.filter((example) => example.kind === 'unmarked').map(
      (example) => `${example.page}:${example.line} (${example.lang}): ${example.problem}`,
    );
    expect(unmarked).toEqual([]);
    // So a parser change that finds nothing cannot pass for a clean bill.
    expect(ALL.length).toBeGreaterThan(20);
  });

  it('the README’s first query is among the examples that run, with the answer it shows', () => {
    const first = RUNNABLE.find(
      (example) =>
        example.page === 'README.md' && example.kind === 'curl' && example.script.includes('pets('),
    );
    expect(first && 'output' in first && first.output?.lang).toBe('json');
  });
});

describe(`${RUNNABLE.length} examples from README.md and docs/, against npm start`, () => {
  for (const example of RUNNABLE) {
    it.skipIf(example.kind === 'curl' && !haveCurl)(label(example), async () => {
      await run(example, gateway);
    });
  }
});

describe('a broken example', () => {
  it.skipIf(!haveCurl)('fails with the page and line of the output it shows', async () => {
    const readme = read('README.md');
    const shown = '{"id":"1","name":"Bella"';
    expect(readme).toContain(shown);
    const broken = examples('README.md', readme.replace(shown, '{"id":"1","name":"Bello"')).find(
      (example): example is Extract<Example, { kind: 'curl' }> =>
        example.kind === 'curl' && example.output?.text.includes('Bello') === true,
    );
    expect(broken?.output).toBeDefined();
    await expect(run(broken as Runnable, gateway)).rejects.toThrow(
      new RegExp(
        `^README\\.md:${broken?.output?.line}: the output shown for the example at line ${broken?.line} `,
      ),
    );
  });

  it('a shown schema that is not the gateway’s fails, naming its line', async () => {
    const page = [
      '# Page',
      '',
      '```graphql',
      'type Query { pets(limit: Int = 10): [Pet!]! }',
      '```',
      '',
    ].join('\n');
    const [schema] = examples('docs/x.md', page);
    expect(schema?.kind).toBe('schema');
    await expect(run(schema as Runnable, gateway)).rejects.toThrow(
      /^docs\/x\.md:3: the schema shown is not a schema/,
    );
    const [wrong] = examples('docs/x.md', page.replace('[Pet!]!', '[String!]!'));
    await expect(run(wrong as Runnable, gateway)).rejects.toThrow(
      /^docs\/x\.md:3: the schema shown is not the gateway's/,
    );
  });
});

describe('the markers', () => {
  const page = (...lines: string[]) => examples('p.md', lines.join('\n'));

  it('not-run applies only on the line directly before the fence, and needs a reason', () => {
    expect(page('<!-- not-run: a cluster command -->', '```sh', 'kubectl apply -f x.yaml', '```')).toEqual([
      {
        kind: 'not-run',
        page: 'p.md',
        line: 2,
        lang: 'sh',
        reason: 'a cluster command',
        text: 'kubectl apply -f x.yaml\n',
      },
    ]);
    expect(page('<!-- not-run: far -->', '', '```sh', 'kubectl apply -f x.yaml', '```')[0]?.kind).toBe(
      'unmarked',
    );
    expect(page('<!-- not-run: -->', '```yaml', 'a: 1', '```')[0]).toMatchObject({ kind: 'unmarked' });
  });

  it('pairs a command with the next text or json block of its section, and output-of with its command', () => {
    expect(
      page(
        '```sh',
        'curl -s http://localhost:4000/health',
        '```',
        'It answers:',
        '```json',
        '{"status":"ok"}',
        '```',
        '## Next',
        '<!-- output-of: GRAPHIQL=off npm start -->',
        '```text',
        'pet-gateway: GraphQL at …',
        '```',
      ),
    ).toEqual([
      {
        kind: 'curl',
        page: 'p.md',
        line: 1,
        script: 'curl -s http://localhost:4000/health',
        output: { line: 5, lang: 'json', text: '{"status":"ok"}\n' },
      },
      {
        kind: 'start',
        page: 'p.md',
        line: 10,
        env: { GRAPHIQL: 'off' },
        output: { line: 10, lang: 'text', text: 'pet-gateway: GraphQL at …\n' },
      },
    ]);
    // A command that is neither curl to the gateway nor npm start is not run, and must say so.
    expect(page('```sh', 'npm run bench', '```')[0]?.kind).toBe('unmarked');
    expect(page('```sh', 'curl -s http://localhost:5173/', '```')[0]?.kind).toBe('unmarked');
    // What a command that does not run prints is not run either.
    expect(
      page(
        '<!-- not-run: a cluster -->',
        '```sh',
        'kubectl get pods',
        '```',
        '```text',
        'NAME READY',
        '```',
      ).map((example) => [example.kind, example.line]),
    ).toEqual([
      ['not-run', 2],
      ['not-run', 5],
    ]);
  });
});
