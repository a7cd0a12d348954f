// @tier unit

import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { withScript } from '../../src/yoga/graphiql/graphiql.ts';

// The table view's pure functions, as the browser runs them: the script file itself, evaluated in a
// context with no document (the page part then stays off). test/browser/graphiql.test.ts runs the
// whole view in Chromium.

type Row = Record<string, unknown>;
interface Table {
  path: string;
  items: unknown[];
  columns: string[];
  rows: Row[];
}
interface TableApi {
  tablesOf(data: unknown): Table[];
  sortRows(rows: Row[], column: string, descending?: boolean): Row[];
  valueCounts(rows: Row[], column: string): Array<[unknown, number]>;
  enumColumns(table: Table, enums?: Map<string, Set<string>>): string[];
  csvOf(columns: string[], rows: Row[]): string;
  enumsOf(schema: unknown): Map<string, Set<string>>;
}

const SCRIPT = readFileSync(new URL('../../src/yoga/graphiql/graphiql-table.js', import.meta.url), 'utf8');
const context: { petGatewayTable?: TableApi } = {};
runInNewContext(SCRIPT, context);
const table = context.petGatewayTable as TableApi;
// Arrays made in the script's context have another Array.prototype: compare as plain JSON.
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value));

const data = {
  pets: [
    {
      id: '9007199254740993',
      name: 'Rex',
      status: 'PENDING',
      owner: { name: 'Ann', address: { city: 'Oslo' } },
    },
    { id: '12', name: 'Tom, "the cat"', status: null, owner: null },
    { id: '-5', name: '=cmd()', status: 'AVAILABLE', owner: { name: 'Bo' }, tags: ['a', 'b'] },
    { id: '3', name: 'Ivy', status: 'PENDING' },
  ],
  other: { nested: [{ n: 1 }, null, { n: 2 }] },
  scalars: [1, 2],
  single: { id: '1' },
};

describe('the GraphiQL table view', () => {
  it('finds every list of objects, columns by first appearance, nested objects flattened by path', () => {
    const tables = plain(table.tablesOf(data));
    expect(tables.map((t) => t.path)).toEqual(['pets', 'other.nested']);
    const [pets, nested] = tables;
    expect(pets?.columns).toEqual([
      'id',
      'name',
      'status',
      'owner.name',
      'owner.address.city',
      'owner',
      'tags',
    ]);
    expect(pets?.rows[0]).toEqual({
      id: '9007199254740993',
      name: 'Rex',
      status: 'PENDING',
      'owner.name': 'Ann',
      'owner.address.city': 'Oslo',
    });
    expect(pets?.rows[1]).toMatchObject({ owner: null });
    expect(pets?.rows[2]).toMatchObject({ tags: '["a","b"]' });
    expect(pets?.items).toEqual(data.pets);
    expect(nested?.rows).toEqual([{ n: 1 }, {}, { n: 2 }]);
  });

  it('sorts 64-bit ids as numbers, text as text, nulls last either way, stably', () => {
    const [pets] = table.tablesOf(data) as [Table];
    const ids = (rows: Row[]) => rows.map((row) => row.id);
    expect(ids(table.sortRows(pets.rows, 'id'))).toEqual(['-5', '3', '12', '9007199254740993']);
    expect(ids(table.sortRows(pets.rows, 'id', true))).toEqual(['9007199254740993', '12', '3', '-5']);
    expect(ids(table.sortRows(pets.rows, 'status'))).toEqual(['-5', '9007199254740993', '3', '12']);
    expect(ids(table.sortRows(pets.rows, 'status', true))).toEqual(['9007199254740993', '3', '-5', '12']);
  });

  it('counts the values of enum columns, most frequent first', () => {
    const [pets] = table.tablesOf(data) as [Table];
    expect(plain(table.valueCounts(pets.rows, 'status'))).toEqual([
      ['PENDING', 2],
      ['AVAILABLE', 1],
      [null, 1],
    ]);
    const enums = table.enumsOf({
      types: [
        {
          kind: 'ENUM',
          name: 'PetStatus',
          enumValues: [{ name: 'AVAILABLE' }, { name: 'PENDING' }, { name: 'SOLD' }],
        },
        { kind: 'ENUM', name: '__TypeKind', enumValues: [{ name: 'OBJECT' }] },
        { kind: 'OBJECT', name: 'Pet' },
      ],
    });
    expect([...enums.keys()]).toEqual(['PetStatus']);
    expect(plain(table.enumColumns(pets, enums))).toEqual(['status']);
    // Without the schema, values that look like enum values and are few.
    expect(plain(table.enumColumns(pets))).toEqual(['status']);
    const names = { path: 'x', items: [], columns: ['name'], rows: [{ name: 'REX' }, { name: 'Tom' }] };
    expect(plain(table.enumColumns(names))).toEqual([]);
  });

  it('writes CSV a spreadsheet reads back as the same rows, and runs no formula', () => {
    const [pets] = table.tablesOf(data) as [Table];
    const csv = table.csvOf(['id', 'name', 'owner.name'], pets.rows);
    // Every cell quoted (OWASP's CSV injection advice): an importer splitting on `;` or tab cannot
    // cut a cell in two.
    expect(csv).toBe(
      [
        '"id","name","owner.name"',
        '"9007199254740993","Rex","Ann"',
        '"12","Tom, ""the cat""",""',
        `"-5","'=cmd()","Bo"`,
        '"3","Ivy",""',
        '',
      ].join('\r\n'),
    );
  });

  it.each([
    // OWASP ASVS 5.0 lists NUL among the characters a formula may hide behind.
    ['\u0000=1+1', `"'\u0000=1+1"`],
    // Quoted, so an importer using ; or tab as its separator cannot make `=1+1` a cell of its own.
    ['x;=1+1', '"x;=1+1"'],
    ['x\t=2+2', '"x\t=2+2"'],
    ['\t=2+2', `"'\t=2+2"`],
    ['\r=3+3', `"'\r=3+3"`],
    ['\n=3+3', `"'\n=3+3"`],
    // Fullwidth forms, which spreadsheets in East Asian locales read as their ASCII twins.
    ['＝1+1', `"'＝1+1"`],
    ['＋1+1', `"'＋1+1"`],
    ['－1+1', `"'－1+1"`],
    ['＠SUM(A1)', `"'＠SUM(A1)"`],
    ['=1+1', `"'=1+1"`],
    ['+1+1', `"'+1+1"`],
    ['-1+1', `"'-1+1"`],
    ['@SUM(A1)', `"'@SUM(A1)"`],
    // A number stays a number: ids and amounts are not formulas.
    ['-5', '"-5"'],
    ['-2.5', '"-2.5"'],
  ])('neutralises the cell %j', (value, cell) => {
    expect(table.csvOf(['v'], [{ v: value }])).toBe(`"v"\r\n${cell}\r\n`);
  });

  it('is inlined after GraphiQL’s own script, and refuses text that would end the script early', () => {
    const page = withScript('<html><body><script>graphiql()</script></body></html>', 'table()');
    expect(page).toBe('<html><body><script>graphiql()</script><script>\ntable()\n</script>\n</body></html>');
    expect(() => withScript('<body></body>', 'x = "</SCRIPT>"')).toThrow(/<\/script/);
    expect(() => withScript('', 'x')).toThrow(/<\/body>/);
  });
});
