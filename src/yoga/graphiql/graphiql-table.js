// The table view of GraphiQL's results, run in the browser: the gateway inlines this file into the
// GraphiQL page it serves (src/yoga/graphiql/graphiql.ts), so it works offline like the rest of the page.
// Plain script, no build step and no dependency. The pure functions below run in Node's tests too
// (test/yoga/graphiql-table.test.ts); the page part starts only where there is a document.
//
// Yoga's GraphiQL bundle takes its options as JSON and builds its plugin list itself, so a sidebar
// plugin cannot be added without patching it. Instead this adds a "JSON | Table" switch to the
// response pane, and reads answers by watching the page's own fetch calls (the bundle's executor
// calls globalThis.fetch at each request).
((root) => {
  /** GraphQL enum values by convention; used only when the page has not seen the schema. */
  const ENUM_NAME = /^[A-Z][A-Z0-9_]*$/;
  const MAX_ENUM_VALUES = 20;

  const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

  /** One answer's object as `path → value` cells: nested objects by dotted path, lists as JSON text. */
  function flatten(object, prefix = '', cells = {}) {
    for (const [key, value] of Object.entries(object)) {
      const path = prefix ? `${prefix}.${key}` : key;
      if (isObject(value)) flatten(value, path, cells);
      else cells[path] = Array.isArray(value) ? JSON.stringify(value) : value;
    }
    return cells;
  }

  /**
   * Every list of objects in an answer's `data`, outermost first: `{ path, items, columns, rows }`.
   * Lists inside a list's items are not tables of their own (one per parent item would drown the
   * view); they are cells holding JSON.
   */
  function tablesOf(data) {
    const tables = [];
    const walk = (value, path) => {
      if (Array.isArray(value)) {
        const items = value.filter((item) => item !== null);
        if (items.length === 0 || !items.every(isObject)) return;
        const rows = value.map((item) => (item === null ? {} : flatten(item)));
        const columns = [];
        for (const row of rows)
          for (const column of Object.keys(row)) if (!columns.includes(column)) columns.push(column);
        tables.push({ path: path || 'data', items: value, columns, rows });
      } else if (isObject(value)) {
        for (const [key, child] of Object.entries(value)) walk(child, path ? `${path}.${key}` : key);
      }
    };
    walk(data, '');
    return tables;
  }

  const INTEGER = /^-?\d+$/;

  /** Orders two cells: nulls last, numbers and integer strings (64-bit ids) by value, text as people read it. */
  function compareCells(a, b) {
    const aMissing = a === null || a === undefined;
    const bMissing = b === null || b === undefined;
    if (aMissing || bMissing) return aMissing === bMissing ? 0 : aMissing ? 1 : -1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    if (typeof a === 'string' && typeof b === 'string' && INTEGER.test(a) && INTEGER.test(b)) {
      const difference = BigInt(a) - BigInt(b);
      return difference === 0n ? 0 : difference < 0n ? -1 : 1;
    }
    return String(a).localeCompare(String(b));
  }

  /** Rows sorted by one column, stably; `descending` reverses the order but keeps nulls last. */
  function sortRows(rows, column, descending = false) {
    return rows
      .map((row, index) => ({ row, index }))
      .sort((x, y) => {
        const a = x.row[column];
        const b = y.row[column];
        const missing = (a === null || a === undefined) !== (b === null || b === undefined);
        const order = missing || !descending ? compareCells(a, b) : -compareCells(a, b);
        return order || x.index - y.index;
      })
      .map(({ row }) => row);
  }

  /** How many rows hold each value of a column, most frequent first; null counted as null. */
  function valueCounts(rows, column) {
    const counts = new Map();
    for (const row of rows) {
      const value = row[column] ?? null;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts].sort((a, b) => b[1] - a[1] || compareCells(a[0], b[0]));
  }

  /**
   * The columns that hold enum values: every value present is a string of one enum type of the
   * schema (`enums`: name → values, from the page's introspection), or, without a schema, every
   * value looks like an enum value and there are few of them.
   */
  function enumColumns(table, enums) {
    return table.columns.filter((column) => {
      const values = table.rows
        .map((row) => row[column])
        .filter((value) => value !== null && value !== undefined);
      if (values.length === 0 || !values.every((value) => typeof value === 'string')) return false;
      if (enums && enums.size > 0) {
        return [...enums.values()].some((members) => values.every((value) => members.has(value)));
      }
      return values.every((value) => ENUM_NAME.test(value)) && new Set(values).size <= MAX_ENUM_VALUES;
    });
  }

  /**
   * Cells a spreadsheet could run as a formula get a leading `'` (OWASP's CSV injection advice):
   * those starting with = + - @, with TAB, CR, LF or NUL before one (OWASP ASVS 5.0 lists NUL), or
   * with the fullwidth ＝ ＋ － ＠ that spreadsheets in East Asian locales read as their ASCII twins.
   * A number ("-5", "-2.5": ids, amounts) is not a formula and stays as it is.
   */
  const FORMULA = /^(?:[=+@\t\r\n\0\uFF1D\uFF0B\uFF0D\uFF20]|-(?!\d+(?:\.\d+)?$))/;

  /**
   * Every cell quoted, quotes doubled: an importer that splits on `;` or tab (a locale's default)
   * cannot cut `x;=1+1` in two and leave `=1+1` a cell of its own.
   */
  function csvCell(value) {
    if (value === null || value === undefined) return '""';
    let text = typeof value === 'string' ? value : String(value);
    if (typeof value === 'string' && FORMULA.test(text)) text = `'${text}`;
    return `"${text.replaceAll('"', '""')}"`;
  }

  /** The table as CSV (RFC 4180: header row, CRLF, every field quoted), the rows in the order given. */
  function csvOf(columns, rows) {
    const lines = [columns.map(csvCell).join(',')];
    for (const row of rows) lines.push(columns.map((column) => csvCell(row[column])).join(','));
    return `${lines.join('\r\n')}\r\n`;
  }

  /** Enum types of an introspection answer: name → set of values (GraphQL's own `__` types left out). */
  function enumsOf(schema) {
    const enums = new Map();
    for (const type of schema?.types ?? []) {
      if (type.kind === 'ENUM' && !type.name.startsWith('__')) {
        enums.set(type.name, new Set((type.enumValues ?? []).map((value) => value.name)));
      }
    }
    return enums;
  }

  const api = { flatten, tablesOf, compareCells, sortRows, valueCounts, enumColumns, csvOf, enumsOf };
  root.petGatewayTable = api;
  if (typeof document === 'undefined' || typeof root.fetch !== 'function') return;

  // ---- The page ----------------------------------------------------------------------------

  const state = { answer: undefined, enums: undefined, view: 'json', sort: new Map() };

  // Every GraphQL answer the page receives passes here; the introspection answer gives the enums.
  const originalFetch = root.fetch;
  root.fetch = function fetchWatched(...args) {
    const response = originalFetch.apply(this, args);
    const body = args[1]?.body;
    if (typeof body === 'string' && body.includes('"query"')) {
      response
        .then((res) => res.clone().text())
        .then((text) => received(JSON.parse(text)))
        .catch(() => {});
    }
    return response;
  };

  function received(answer) {
    if (!isObject(answer)) return;
    if (isObject(answer.data) && isObject(answer.data.__schema)) {
      state.enums = enumsOf(answer.data.__schema);
      return;
    }
    state.answer = answer;
    state.sort.clear();
    render();
  }

  const STYLE = `
.pg-table-switch{display:flex;gap:4px;justify-content:flex-end;padding:0 var(--px-16,16px) 4px;font-size:12px}
.pg-table-switch button{border:1px solid hsla(var(--color-neutral),0.2);background:none;color:inherit;border-radius:4px;padding:2px 10px;cursor:pointer;font:inherit}
.pg-table-switch button[aria-pressed=true]{background:hsla(var(--color-primary),0.15);border-color:hsl(var(--color-primary))}
.pg-table-panel{position:absolute;left:0;right:0;bottom:0;overflow:auto;padding:0 var(--px-16,16px) 16px;background:hsl(var(--color-base));z-index:5;font-size:13px}
.pg-table-panel h3{font-size:14px;margin:12px 0 6px;display:flex;gap:8px;align-items:center}
.pg-table-panel h3 button{font-size:12px;border:1px solid hsla(var(--color-neutral),0.2);background:none;color:inherit;border-radius:4px;padding:1px 8px;cursor:pointer}
.pg-table{border-collapse:separate;border-spacing:0;margin-bottom:8px}
.pg-table th,.pg-table td{border:solid hsla(var(--color-neutral),0.15);border-width:0 1px 1px 0;padding:3px 8px;text-align:left;white-space:nowrap}
.pg-table th:first-child,.pg-table td:first-child{border-left-width:1px}
.pg-table th{border-top-width:1px}
.pg-table th{background:linear-gradient(hsla(var(--color-neutral),0.06),hsla(var(--color-neutral),0.06)),hsl(var(--color-base));position:sticky;top:0;z-index:1}
.pg-table th button{all:unset;cursor:pointer;font-weight:600}
.pg-table th button:focus-visible{outline:2px solid hsl(var(--color-primary))}
.pg-table td.pg-null{color:hsla(var(--color-neutral),0.4)}
.pg-counts{list-style:none;padding:0;margin:4px 0 8px;max-width:420px}
.pg-counts li{display:grid;grid-template-columns:120px 1fr 40px;gap:6px;align-items:center;margin:2px 0}
.pg-counts .pg-bar{height:10px;background:hsl(var(--color-primary));border-radius:2px}
.pg-table-empty{margin-top:12px;color:hsla(var(--color-neutral),0.6)}`;

  const element = (tag, attributes = {}, children = []) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === 'text') node.textContent = value;
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value);
    }
    node.append(...children);
    return node;
  };

  function download(name, type, text) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const link = element('a', { href: url, download: name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  const fileName = (path) => path.replace(/[^\w.-]+/g, '_');

  function tableSection(table) {
    const [column, descending] = state.sort.get(table.path) ?? [];
    const rows = column === undefined ? table.rows : sortRows(table.rows, column, descending);
    // A button in each header, so sorting works from the keyboard too.
    const header = table.columns.map((name) =>
      element(
        'th',
        {
          'data-column': name,
          'aria-sort': name === column ? (descending ? 'descending' : 'ascending') : 'none',
        },
        [
          element('button', {
            type: 'button',
            title: 'Sort by this column',
            text: name === column ? `${name} ${descending ? '▼' : '▲'}` : name,
            onclick: () => {
              state.sort.set(table.path, [name, name === column ? !descending : false]);
              render();
            },
          }),
        ],
      ),
    );
    const body = rows.map((row) =>
      element(
        'tr',
        {},
        table.columns.map((name) => {
          const value = row[name];
          const missing = value === null || value === undefined;
          return element('td', missing ? { class: 'pg-null' } : {}, [missing ? 'null' : String(value)]);
        }),
      ),
    );
    const counts = enumColumns(table, state.enums).map((name) => {
      const entries = valueCounts(table.rows, name);
      const most = Math.max(...entries.map(([, count]) => count));
      return element('div', {}, [
        element('div', { text: `${name}: rows per value` }),
        element(
          'ul',
          { class: 'pg-counts', 'data-column': name },
          entries.map(([value, count]) =>
            element(
              'li',
              { 'data-value': value === null ? '' : String(value), 'data-count': String(count) },
              [
                element('span', { text: value === null ? 'null' : String(value) }),
                element('span', {}, [
                  element('div', { class: 'pg-bar', style: `width:${(100 * count) / most}%` }),
                ]),
                element('span', { text: String(count) }),
              ],
            ),
          ),
        ),
      ]);
    });
    return element('section', { 'data-path': table.path }, [
      element('h3', {}, [
        element('span', { text: `${table.path} · ${table.rows.length} rows` }),
        element('button', {
          class: 'pg-download-csv',
          text: 'CSV',
          title: 'Download these rows as CSV, in the order shown',
          onclick: () =>
            download(`${fileName(table.path)}.csv`, 'text/csv', `\ufeff${csvOf(table.columns, rows)}`),
        }),
        element('button', {
          class: 'pg-download-json',
          text: 'JSON',
          title: 'Download this list as the answer holds it',
          onclick: () =>
            download(
              `${fileName(table.path)}.json`,
              'application/json',
              `${JSON.stringify(table.items, null, 2)}\n`,
            ),
        }),
      ]),
      ...counts,
      element('table', { class: 'pg-table', 'data-path': table.path }, [
        element('thead', {}, [element('tr', {}, header)]),
        element('tbody', {}, body),
      ]),
    ]);
  }

  let switcher;
  let panel;

  function render() {
    const pane = document.querySelector('.graphiql-response');
    if (!pane) return;
    if (!document.getElementById('pg-table-style')) {
      document.head.append(element('style', { id: 'pg-table-style', text: STYLE }));
    }
    // React owns the pane; re-attach if it rendered the pane anew.
    if (!switcher || !pane.contains(switcher)) {
      if (getComputedStyle(pane).position === 'static') pane.style.position = 'relative';
      const button = (view, label) =>
        element('button', {
          type: 'button',
          class: `pg-table-${view}`,
          text: label,
          onclick: () => {
            state.view = view;
            render();
          },
        });
      switcher = element('div', { class: 'pg-table-switch', role: 'group', 'aria-label': 'Result view' }, [
        button('json', 'JSON'),
        button('table', 'Table'),
      ]);
      panel = element('div', { class: 'pg-table-panel' });
      pane.prepend(switcher);
      pane.append(panel);
    }
    for (const button of switcher.querySelectorAll('button')) {
      button.setAttribute('aria-pressed', String(button.classList.contains(`pg-table-${state.view}`)));
    }
    panel.hidden = state.view !== 'table';
    if (panel.hidden) return;
    panel.style.top = `${switcher.offsetTop + switcher.offsetHeight}px`;
    const tables = isObject(state.answer?.data) ? tablesOf(state.answer.data) : [];
    panel.replaceChildren(
      ...(tables.length > 0
        ? tables.map(tableSection)
        : [
            element('p', {
              class: 'pg-table-empty',
              text: state.answer
                ? 'The last answer holds no list of objects.'
                : 'Run a query to see its lists as tables.',
            }),
          ]),
    );
  }

  // The pane appears once GraphiQL has rendered, and again whenever React renders it anew.
  setInterval(() => {
    if (!switcher?.isConnected) render();
  }, 500);
})(globalThis);
