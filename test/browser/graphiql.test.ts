// @tier slow: a real Chromium against the gateway as a process

import { mkdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sentence } from '../docs/claims.ts';
import { chromiumFor } from '../support/chromium.ts';
import { startMain, type Watched } from '../support/process.ts';

const chromium = await chromiumFor('graphiql.test');
const haveChromium = chromium.available;

/** The sentence of docs/graphiql.md the docs-pane test holds true (found by its beginning). */
const DOCS_PANE_CLAIM = 'The docs pane shows each argument';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

let gateway: Watched | undefined;
let url = '';
let key = '';

beforeAll(async () => {
  if (!haveChromium) return;
  // The embedded default, exactly as a newcomer runs `npm start`.
  gateway = startMain({ PORT: '0', HOST: '127.0.0.1', PETSTORE_DB: ':memory:' });
  [, url = ''] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
  await gateway.waitFor(/API key for this run/);
  [, key = ''] = await gateway.waitFor(/export KEY=(\S+)/);
});

afterAll(() => gateway?.stop());

const launch = () => chromium.launch();

describe.skipIf(!haveChromium)('GraphiQL in a real browser', () => {
  it('opens offline with the explorer, the example query and the key prefilled, runs it and shows pets', async () => {
    const browser = await launch();
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
      expect(editor).toContain('pets(status: AVAILABLE)');
      // Every line of the example fits the editor at 1,400 px beside the explorer: none is cut at
      // the editor's right edge (the line ends no further right than the area that shows it).
      const overflow = await page.locator('.graphiql-query-editor').evaluate((element) => {
        const shown = element.querySelector('.overflow-guard')?.getBoundingClientRect();
        const ends = [...element.querySelectorAll('.view-line > span')].map(
          (line) => line.getBoundingClientRect().right,
        );
        return shown && ends.length > 0 ? Math.max(...ends) - shown.right : Number.NaN;
      });
      expect(overflow).toBeLessThanOrEqual(0);

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

  it.each([
    ['a subscription', 'subscription Live { pets(status: PENDING, limit: 100) { name } }'],
    ['a @live query', 'query Live @live { pets(status: PENDING, limit: 100) { name } }'],
  ])(
    'runs %s (over SSE), shows its first event, then the list again once a pet is created',
    async (_kind, query) => {
      const browser = await launch();
      try {
        // Tall enough that the response editor renders every line of the list (it renders only
        // the lines in view): 12 seeded pending pets and the one created below.
        const page = await browser.newPage({ viewport: { width: 1400, height: 2400 } });
        const pageErrors: string[] = [];
        page.on('pageerror', (error) => pageErrors.push(error.message));
        const subscribed: string[] = [];
        page.on('request', (request) => {
          if (request.headers().accept === 'text/event-stream') subscribed.push(request.url());
        });
        await page.goto(`${url}?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
        await page.locator('.graphiql-execute-button').waitFor({ timeout: 20_000 });
        const editor = (await page.locator('.graphiql-query-editor').innerText()).replace(/\s+/g, ' ');
        expect(editor).toContain(query.slice(0, query.indexOf('{')).trim());
        await page.locator('.graphiql-execute-button').click();
        const result = page.locator('.graphiql-response');
        await expect.poll(() => result.innerText(), { timeout: 20_000 }).toContain('"name"');
        expect(await result.innerText()).not.toContain('"errors"');
        expect(subscribed.some((request) => request.includes('Live'))).toBe(true);
        // A create through the gateway makes the live list ask again at once: the next event holds it.
        const later = `Later${Date.now()}`;
        const created = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({
            query: `mutation { createPet(input: { name: "${later}", categoryId: "1", status: PENDING }) { id } }`,
          }),
        });
        expect(((await created.json()) as { errors?: unknown }).errors).toBeUndefined();
        await expect.poll(() => result.innerText(), { timeout: 20_000 }).toContain(later);
        expect(pageErrors).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );

  it('shows the answer’s list as a table: rows and columns as in the JSON, sortable, status counts, CSV and JSON downloads', async () => {
    const browser = await launch();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
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

      // All three statuses: the seeded store holds 12 pets of each, in id order.
      const query = '{ pets(limit: 30) { id name categoryId status } }';
      await page.goto(`${url}?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 20_000 });
      // The JSON the page received, as GraphiQL shows it (its editor renders only the visible lines).
      const [answer] = await Promise.all([
        page.waitForResponse(
          (response) =>
            response.request().method() === 'POST' &&
            /pets\(limit: ?30\)/.test(response.request().postData() ?? ''),
          { timeout: 20_000 },
        ),
        page.locator('.graphiql-execute-button').click(),
      ]);
      type PetRow = { id: string; name: string; categoryId: string; status: string | null };
      const pets = ((await answer.json()) as { data: { pets: PetRow[] } }).data.pets;
      expect(pets).toHaveLength(30);
      const cells = (pet: PetRow) => [pet.id, pet.name, pet.categoryId, pet.status ?? 'null'];

      await page.locator('.pg-table-table').click();
      const table = page.locator('table.pg-table[data-path="pets"]');
      await table.waitFor({ timeout: 10_000 });
      const rowsShown = () =>
        table.evaluate((node) =>
          [...node.querySelectorAll('tbody tr')].map((row) =>
            [...row.querySelectorAll('td')].map((td) => td.textContent),
          ),
        );
      expect(
        await table.locator('th').evaluateAll((ths) => ths.map((th) => th.getAttribute('data-column'))),
      ).toEqual(['id', 'name', 'categoryId', 'status']);
      expect(await rowsShown()).toEqual(pets.map(cells));

      // Status counts: one bar per status, as many rows as the JSON holds of each.
      const expectedCounts = new Map<string, number>();
      for (const pet of pets)
        expectedCounts.set(pet.status ?? '', (expectedCounts.get(pet.status ?? '') ?? 0) + 1);
      expect(expectedCounts.size).toBe(3);
      const counts = await page
        .locator('.pg-counts[data-column="status"] li')
        .evaluateAll((items) =>
          items.map((li) => [li.getAttribute('data-value'), Number(li.getAttribute('data-count'))]),
        );
      expect(new Map(counts as Array<[string, number]>)).toEqual(expectedCounts);
      expect(await page.locator('.pg-counts[data-column="status"] .pg-bar').count()).toBe(3);

      // Sorting: id descending (as 64-bit numbers), then name ascending.
      const byId = [...pets].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
      await table.locator('th[data-column="id"]').click();
      expect(await rowsShown()).toEqual(byId.map(cells));
      await table.locator('th[data-column="id"]').click();
      expect(await rowsShown()).toEqual([...byId].reverse().map(cells));
      // From the keyboard: the header is a button.
      await table.locator('th[data-column="name"] button').press('Enter');
      const names = (await rowsShown()).map((row) => row[1] as string);
      expect([...names].sort()).toEqual(pets.map((pet) => pet.name).sort());
      expect(names.every((name, i) => i === 0 || (names[i - 1] as string).localeCompare(name) <= 0)).toBe(
        true,
      );
      const shownOrder = await rowsShown();

      // The CSV holds the rows as shown; read back, it is the JSON's pets.
      const [csvDownload] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('.pg-download-csv').click(),
      ]);
      expect(csvDownload.suggestedFilename()).toBe('pets.csv');
      const csv = readFileSync(await csvDownload.path(), 'utf8');
      expect(csv.startsWith('\ufeff')).toBe(true);
      const [header, ...records] = parseCsv(csv.slice(1));
      expect(header).toEqual(['id', 'name', 'categoryId', 'status']);
      expect(records).toEqual(shownOrder.map((row) => row.map((cell) => (cell === 'null' ? '' : cell))));
      const fromCsv = records.map(([id, name, categoryId, status]) => ({
        id,
        name,
        categoryId,
        status: status || null,
      }));
      const sortById = (list: Array<Record<string, unknown>>) =>
        [...list].sort((a, b) => (BigInt(a.id as string) < BigInt(b.id as string) ? -1 : 1));
      expect(sortById(fromCsv)).toEqual(sortById(pets));

      const [jsonDownload] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('.pg-download-json').click(),
      ]);
      expect(jsonDownload.suggestedFilename()).toBe('pets.json');
      expect(JSON.parse(readFileSync(await jsonDownload.path(), 'utf8'))).toEqual(pets);

      // Back to the JSON view: the table steps aside.
      await page.locator('.pg-table-json').click();
      expect(await page.locator('.pg-table-panel').isHidden()).toBe(true);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.locator('.pg-table-table').click();
      await page.screenshot({ path: `${ARTIFACTS}graphiql-table.png` });
      expect(pageErrors).toEqual([]);
      expect(foreignRequests).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe.skipIf(!haveChromium)('GraphiQL in a real browser: what docs/graphiql.md says of it', () => {
  it('the table view’s sticky header is opaque: rows scrolled under it do not show through', async () => {
    const browser = await launch();
    try {
      // Short, so the panel scrolls: 36 rows under a header that stays put.
      const page = await browser.newPage({ viewport: { width: 1200, height: 600 } });
      const query = '{ pets(limit: 36) { id name categoryId status } }';
      await page.goto(`${url}?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 20_000 });
      await page.locator('.graphiql-execute-button').click();
      await expect
        .poll(() => page.locator('.graphiql-response').innerText(), { timeout: 20_000 })
        .toContain('"SOLD"');
      await page.locator('.pg-table-table').click();
      const header = page.locator('table.pg-table[data-path="pets"] thead');
      await header.waitFor({ timeout: 10_000 });
      const panel = page.locator('.pg-table-panel');
      const scrolled = async (top: number) => {
        await panel.evaluate((node, y) => {
          node.scrollTop = y;
        }, top);
        await page.waitForTimeout(100);
        // The header cells (sticky themselves), as one rectangle.
        const box = await header.evaluate((thead) => {
          const cells = [...thead.querySelectorAll('th')].map((th) => th.getBoundingClientRect());
          const x = Math.min(...cells.map((cell) => cell.left));
          const y = Math.min(...cells.map((cell) => cell.top));
          const right = Math.max(...cells.map((cell) => cell.right));
          const bottom = Math.max(...cells.map((cell) => cell.bottom));
          return { x, y, width: right - x, height: bottom - y };
        });
        return { box, pixels: await page.screenshot({ clip: box }) };
      };
      // Scrolled past the table's top, twice, with other rows under the header each time.
      const panelTop = await panel.evaluate((node) => node.getBoundingClientRect().top);
      const first = await scrolled(180);
      const second = await scrolled(240);
      expect(await panel.evaluate((node) => node.scrollTop)).toBe(240);
      // The header is held at the panel's top both times…
      expect(first.box.y).toBeCloseTo(panelTop, 0);
      expect(second.box.y).toBeCloseTo(panelTop, 0);
      // …and looks exactly the same: nothing of the rows under it shows through.
      expect(second.pixels.equals(first.pixels)).toBe(true);
    } finally {
      await browser.close();
    }
  });

  it(`docs pane: ${JSON.stringify(DOCS_PANE_CLAIM.slice(0, 60))}… (docs/graphiql.md)`, async () => {
    const claim = sentence('docs/graphiql.md', DOCS_PANE_CLAIM);
    const browser = await launch();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(url, { waitUntil: 'load' });
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 20_000 });
      await page.locator('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]').click();
      const docs = page.locator('.graphiql-doc-explorer');
      await docs
        .locator('a', { hasText: /^Query$/ })
        .first()
        .click();
      await docs.locator('a.graphiql-doc-explorer-field-name', { hasText: /^pets$/ }).click();
      await expect.poll(() => docs.innerText(), { timeout: 10_000 }).toContain('Arguments');
      const text = await docs.innerText();
      // What the sentence shows in code (`limit: Int`) is the argument's line, exactly…
      const shown = /`(limit: [^`]+)`/.exec(claim)?.[1];
      expect(shown, claim).toBeDefined();
      expect(text.split('\n'), claim).toContain(shown);
      // …and the default it says the description gives is there.
      const inDescription = /“([^”]+)”/.exec(claim)?.[1];
      expect(inDescription, claim).toBeDefined();
      expect(text, claim).toContain(inDescription);
    } finally {
      await browser.close();
    }
  });
});

/** RFC 4180 CSV: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += char;
  }
  if (field !== '' || record.length > 0) records.push([...record, field]);
  return records;
}
