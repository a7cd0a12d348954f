// @tier slow: a Vite build, npm start and a real Chromium

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor } from '../support/chromium.ts';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

// examples/web as a front-end developer runs it: built by Vite, served from its own origin, calling
// `npm start`'s gateway on another origin with CORS_ORIGINS set to the app's origin as copied from
// an address bar (trailing slash), in a real Chromium.

const browserSupport = await chromiumFor('web-example.test');
const haveChromium = browserSupport.available;

const EXAMPLE = new URL('../../examples/web/', import.meta.url).pathname;
const VITE = new URL('../../node_modules/vite/bin/vite.js', import.meta.url).pathname;
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

let outDir = '';
let app: Server;
let appOrigin = '';
let gateway: StartedGateway;

beforeAll(async () => {
  if (!haveChromium) return;
  outDir = mkdtempSync(join(tmpdir(), 'web-example-'));
  // The app's own origin: a static server of the build, nothing else.
  app = createServer((req, res) => {
    const path = normalize(new URL(req.url ?? '/', 'http://x').pathname).replace(/^(\.\.[/\\])+/, '');
    const file = join(outDir, path === '/' ? 'index.html' : path);
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  }).listen(0, '127.0.0.1');
  await once(app, 'listening');
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  gateway = await npmStart({ CORS_ORIGINS: `${appOrigin}/` });

  const build = spawn(process.execPath, [VITE, 'build', '--outDir', outDir, '--emptyOutDir'], {
    cwd: EXAMPLE,
    env: { PATH: process.env.PATH ?? '', VITE_GATEWAY_URL: `${gateway.origin}/graphql` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  build.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  build.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const [code] = await once(build, 'exit');
  if (code !== 0) throw new Error(`vite build failed:\n${output}`);
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  app?.close();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

describe.skipIf(!haveChromium)('examples/web in a real browser, on its own origin', () => {
  it('lists pets by status, live: shows a blank name refused beside the name field, lists a pet it creates and one created on the REST service', async () => {
    const browser = await browserSupport.launch();
    try {
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      // What answers the app's `query … @live`: a stream, never one JSON answer.
      const liveAnswers: string[] = [];
      page.on('response', (response) => {
        if (response.request().postData()?.includes('@live'))
          liveAnswers.push(response.headers()['content-type'] ?? '');
      });
      await page.goto(appOrigin, { waitUntil: 'load' });
      await page.locator('input[name="key"]').fill(gateway.key as string);

      const pets = page.locator('ul[aria-label="pets"] li');
      await expect.poll(() => pets.count(), { timeout: 20_000 }).toBeGreaterThan(3);
      await page.locator('select[name="status"]').first().selectOption('SOLD');
      // A new live query starts from an empty list: wait for its first event, not just for no
      // unsold pet (a status passed as a variable was once refused, and the list stayed empty).
      await expect
        .poll(
          async () => {
            const texts = await pets.allInnerTexts();
            return texts.length > 0 && texts.every((text) => text.endsWith('(sold)'));
          },
          { timeout: 20_000 },
        )
        .toBe(true);
      expect(await pets.count()).toBeGreaterThan(0);

      // A blank name: the gateway's message, beside the name field (extensions.argument input.name).
      await page.locator('input[name="name"]').fill('   ');
      await page.getByRole('button', { name: 'Add' }).click();
      await expect
        .poll(() => page.locator('#name-error').innerText(), { timeout: 20_000 })
        .toBe(
          "input.name must not be empty or blank (this gateway's rule; the animal store's contract sets no name limits).",
        );
      expect(await page.locator('#category-error').innerText()).toBe('');

      const name = `Biscuit ${Date.now()}`;
      await page.locator('input[name="name"]').fill(name);
      await page.locator('form select[name="status"]').selectOption('SOLD');
      await page.getByRole('button', { name: 'Add' }).click();
      await expect.poll(() => page.locator('#name-error').innerText(), { timeout: 20_000 }).toBe('');
      // The list is a live query: the pet created here arrives without a reload...
      await expect.poll(() => pets.allInnerTexts(), { timeout: 20_000 }).toContain(`${name} (sold)`);
      // ...and so does one created on the REST service by someone else, within the gateway's poll.
      const store = /reference animal store at (http:\/\/\S+\/v1)/.exec(gateway.lines().join('\n'))?.[1];
      expect(store).toBeDefined();
      const elsewhere = `Elsewhere ${Date.now()}`;
      const posted = await fetch(`${store}/pets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` },
        body: JSON.stringify({ name: elsewhere, categoryId: 1, status: 'sold' }),
      });
      expect(posted.status).toBe(201);
      await expect.poll(() => pets.allInnerTexts(), { timeout: 10_000 }).toContain(`${elsewhere} (sold)`);
      expect(liveAnswers.length).toBeGreaterThan(0);
      for (const type of liveAnswers) expect(type).toMatch(/^text\/event-stream/);
      // One stream held for the one list on screen: the list of another status was let go, and a
      // create asked for nothing beside it.
      const open = async () =>
        /^pet_gateway_live_subscriptions (\d+)/m.exec(
          await (await fetch(`${gateway.origin}/metrics`)).text(),
        )?.[1];
      await expect.poll(open, { timeout: 10_000 }).toBe('1');
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 90_000);

  it('says when the list is full: past 100 pets of any status, and not for a status with fewer', async () => {
    const store = /reference animal store at (http:\/\/\S+\/v1)/.exec(gateway.lines().join('\n'))?.[1];
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` };
    // More pets than one list holds, all pending: sold stays far below 100.
    for (let i = 0; i < 70; i++) {
      const posted = await fetch(`${store}/pets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `Crowd ${i}`, categoryId: 1, status: 'pending' }),
      });
      expect(posted.status).toBe(201);
    }
    const browser = await browserSupport.launch();
    try {
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(appOrigin, { waitUntil: 'load' });
      await page.locator('input[name="key"]').fill(gateway.key as string);
      const pets = page.locator('ul[aria-label="pets"] li');
      const full = page.locator('#list-full');
      await expect.poll(() => pets.count(), { timeout: 20_000 }).toBe(100);
      await expect.poll(() => full.isVisible(), { timeout: 20_000 }).toBe(true);
      expect(await full.innerText()).toContain('The list is full');

      await page.locator('select[name="status"]').first().selectOption('SOLD');
      await expect
        .poll(
          async () => {
            const texts = await pets.allInnerTexts();
            return texts.length > 0 && texts.every((text) => text.endsWith('(sold)'));
          },
          { timeout: 20_000 },
        )
        .toBe(true);
      expect(await full.count()).toBe(0);
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
