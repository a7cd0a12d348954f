import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The browser: Debian's Chromium when the machine has it (CHROMIUM_PATH, else /usr/bin/chromium);
// otherwise the Chromium build that the @sparticuz/chromium devDependency carries inside its npm
// package (nothing is downloaded: `npm ci` brings it, and it is unpacked into the temp directory on
// first use), so a fresh clone runs this test with `npm ci` alone. Only when neither can start is the
// test skipped, saying why; in CI (CI set) that fails the run instead.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

async function findChromium(): Promise<{ path?: string; problem?: string }> {
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    return { path: await packaged.executablePath() };
  } catch (error) {
    return {
      problem: `no Chromium at ${CHROMIUM}, and @sparticuz/chromium did not unpack (${(error as Error).message})`,
    };
  }
}

const chromiumFound = await findChromium();
const haveChromium = chromiumFound.path !== undefined;
if (!haveChromium && process.env.CI) throw new Error(`[graphiql.test] ${chromiumFound.problem}`);
if (!haveChromium) console.warn(`[graphiql.test] skipped: ${chromiumFound.problem} (run npm ci)`);

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

let gateway: ChildProcess;
let url = '';

beforeAll(async () => {
  if (!haveChromium) return;
  // The embedded default, exactly as a newcomer runs `npm start`.
  gateway = spawn(process.execPath, ['src/main.ts'], {
    cwd: new URL('../..', import.meta.url),
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', PETSTORE_DB: ':memory:' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    gateway.stdout?.on('data', (chunk) => {
      output += chunk;
      const match = /GraphiQL at (http:\/\/\S+\/graphql)/.exec(output);
      if (match?.[1] && /API key for this run/.test(output)) {
        url = match[1];
        resolve();
      }
    });
    gateway.on('exit', () => reject(new Error(`gateway exited:\n${output}`)));
  });
});

afterAll(() => {
  gateway?.kill('SIGTERM');
});

describe.skipIf(!haveChromium)('GraphiQL in a real browser', () => {
  it('opens offline with the explorer, the example query and the key prefilled, runs it and shows pets', async () => {
    const browser = await chromium.launch({
      ...(chromiumFound.path ? { executablePath: chromiumFound.path } : {}),
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
      const pageErrors: string[] = [];
      const foreignRequests: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(message.text());
      });
      page.on('request', (request) => {
        const { protocol, hostname } = new URL(request.url());
        if ((protocol === 'http:' || protocol === 'https:') && hostname !== '127.0.0.1')
          foreignRequests.push(request.url());
      });

      await page.goto(url, { waitUntil: 'load' });
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 20_000 });
      // Editors render spaces as no-break spaces.
      const editor = (await page.locator('.graphiql-query-editor').innerText()).replace(/\s+/g, ' ');
      expect(editor).toContain('pets(status: AVAILABLE, limit: 10)');

      // The explorer is open, so an analyst can build a query by ticking the schema's fields.
      const explorer = page.locator('.graphiql-explorer-root');
      await explorer.waitFor({ timeout: 20_000 });
      await expect.poll(() => explorer.innerText(), { timeout: 20_000 }).toContain('pets');

      await page.locator('.graphiql-execute-button').click();
      const result = page.locator('.graphiql-response');
      await expect.poll(() => result.innerText(), { timeout: 20_000 }).toContain('"AVAILABLE"');
      const text = (await result.innerText()).replace(/\s+/g, ' ');
      expect(text).toContain('"pets"');
      expect(text).not.toContain('"errors"');

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}graphiql.png` });
      expect(pageErrors).toEqual([]);
      // Everything GraphiQL needs comes from the gateway: no CDN, so it works with no internet.
      expect(foreignRequests).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
