import fc from 'fast-check';

// Schema-aware generators for the gateway's operations: valid ones, and ones broken in every way
// the schema allows a client to break them (bad arguments, unknown fields and directives, aliases,
// fragments, random literals).

const alias = fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,5}$/);

/** ID values: valid int64s (also past 2^53), out-of-range, non-decimal and long strings. */
export const idValue = fc.oneof(
  fc.constantFrom('1', '9007199254740993', '2', '007'),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
  fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
  fc.integer({ min: 1, max: 5 }).map(String),
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', '1.5', '+1', ' 1', '١٢', '0x1F', '007', '-0', '1e3', '9223372036854775808'),
  fc.integer({ min: 2, max: 4 }).map((n) => '7'.repeat(10 ** n)),
);

/** The pieces of an operation; `hostile` adds invalid choices (unknown fields, bad literals…). */
function pieces(hostile: boolean) {
  // Mostly valid choices, so a good share of operations runs and reaches the upstream; the rest
  // breaks one thing at a time.
  const directive = fc.oneof(
    { weight: 12, arbitrary: fc.constant('') },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '@include(if: true)',
        '@include(if: false)',
        '@skip(if: true)',
        '@skip(if: false)',
        '@include(if: true) @skip(if: false)',
      ),
    },
    ...(hostile ? [{ weight: 1, arbitrary: fc.constantFrom('@bogus', '@deprecated', '@include') }] : []),
  );

  const limitLiteral = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) },
    fc.integer(hostile ? { min: -3, max: 103 } : { min: 1, max: 100 }).map(String),
    hostile
      ? fc.constantFrom(
          '0',
          '101',
          '-1',
          '2147483647',
          '2147483648',
          '"1"',
          '1.5',
          'null',
          'true',
          'AVAILABLE',
          '[1]',
          '$limit',
        )
      : fc.constantFrom('null', '$limit'),
  );

  const statusLiteral = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('AVAILABLE', 'PENDING', 'SOLD', 'null', '$status') },
    ...(hostile ? [{ weight: 1, arbitrary: fc.constantFrom('available', '"SOLD"', 'BOGUS') }] : []),
  );

  const petFieldName = fc.oneof(
    { weight: 20, arbitrary: fc.constantFrom('id', 'name', 'categoryId', 'status', '__typename') },
    ...(hostile ? [{ weight: 1, arbitrary: fc.constantFrom('bogus', 'pets') }] : []),
  );

  const field = fc
    .tuple(fc.option(alias, { freq: 3 }), petFieldName, directive)
    .map(([a, name, d]) => `${a ? `${a}: ` : ''}${name} ${d}`.trim());

  /** A Pet selection set's contents: fields, inline fragments and spreads of `PetFields`. */
  const petSelection: fc.Arbitrary<string> = fc
    .array(
      fc.oneof(
        { weight: 6, arbitrary: field },
        {
          weight: 1,
          arbitrary: fc
            .tuple(
              fc.array(field, { minLength: 1, maxLength: 3 }),
              directive,
              hostile
                ? fc.constantFrom('on Pet', 'on Pet', 'on Pet', '', 'on Query')
                : fc.constantFrom('on Pet', ''),
            )
            .map(([fields, d, on]) => `... ${on} ${d} { ${fields.join(' ')} }`),
        },
        { weight: 1, arbitrary: directive.map((d) => `...PetFields ${d}`) },
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((parts) => parts.join(' '));

  const args = (parts: Array<string | null>) => {
    const present = parts.filter((part): part is string => part !== null);
    return present.length ? `(${present.join(', ')})` : '';
  };

  const rootField = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.option(alias), fc.option(limitLiteral), fc.option(statusLiteral), directive, petSelection)
        .map(
          ([a, limit, status, d, sel]) =>
            `${a ? `${a}: ` : ''}pets${args([limit && `limit: ${limit}`, status && `status: ${status}`])} ${d} { ${sel} }`,
        ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.option(alias),
          fc.oneof(
            idValue.map((id) => JSON.stringify(id)),
            fc.constant('$id'),
          ),
          directive,
          petSelection,
        )
        .map(([a, id, d, sel]) => `${a ? `${a}: ` : ''}pet(id: ${id}) ${d} { ${sel} }`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '__typename',
        '__schema { queryType { name } }',
        '__type(name: "Pet") { name }',
      ),
    },
  );

  const createPet = fc
    .tuple(
      fc.option(alias),
      fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('Rex', '', '  ')),
      idValue,
      fc.option(statusLiteral),
      petSelection,
    )
    .map(
      ([a, name, categoryId, status, sel]) =>
        `${a ? `${a}: ` : ''}createPet(input: { name: ${JSON.stringify(name)}, categoryId: ${JSON.stringify(categoryId)}${
          status ? `, status: ${status}` : ''
        } }) { ${sel} }`,
    );

  const VARIABLE_TYPES: Record<string, string> = { limit: 'Int', status: 'PetStatus', id: 'ID!' };

  /** Values for `$limit`, `$status`, `$id`: mostly of the declared type, sometimes not. */
  const variables = fc.option(
    fc.record(
      {
        limit: fc.oneof(
          { weight: 6, arbitrary: fc.integer({ min: 1, max: 100 }) },
          fc.integer({ min: -2, max: 102 }),
          fc.constant(null),
          { weight: 1, arbitrary: fc.constantFrom<unknown>('1', 2 ** 31, 1.5, true) },
        ),
        status: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom('AVAILABLE', 'SOLD', null) },
          { weight: 1, arbitrary: fc.constantFrom<unknown>('available', 1) },
        ),
        id: fc.oneof(
          { weight: 8, arbitrary: idValue },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 7, []) },
        ),
      },
      { requiredKeys: [] },
    ),
    { freq: 2 },
  );
  return { rootField, createPet, variables, VARIABLE_TYPES };
}

/** A whole GraphQL request: query text, maybe variables. */
export interface Operation {
  query: string;
  variables?: Record<string, unknown>;
}

function build(hostile: boolean): fc.Arbitrary<Operation> {
  const { rootField, createPet, variables, VARIABLE_TYPES } = pieces(hostile);
  return fc
    .tuple(
      fc.constantFrom('query', 'anonymous', 'mutation', 'query'),
      fc.boolean(),
      fc.array(rootField, { minLength: 1, maxLength: 3 }),
      fc.array(createPet, { minLength: 1, maxLength: 2 }),
      hostile
        ? fc.constantFrom(
            'fragment PetFields on Pet { id name }',
            'fragment PetFields on Pet { ...PetFields }',
          )
        : fc.constant('fragment PetFields on Pet { id name }'),
      variables,
    )
    .map(([kind, declare, fields, creates, fragment, vars]) => {
      const body = kind === 'mutation' ? creates.join(' ') : fields.join(' ');
      // Declare exactly the variables used (unless `declare` is off: then they are undefined).
      const used = [...new Set([...body.matchAll(/\$(limit|status|id)\b/g)].map((m) => m[1] as string))];
      const definitions =
        declare && used.length ? `(${used.map((v) => `$${v}: ${VARIABLE_TYPES[v]}`).join(', ')})` : '';
      const head =
        kind === 'anonymous' && !definitions
          ? ''
          : `${kind === 'mutation' ? 'mutation' : 'query'} Op${definitions}`;
      // The fragment is only defined where it is spread: an unused one is just a validation error.
      const query = `${head} { ${body} } ${body.includes('...PetFields') ? fragment : ''}`.trim();
      return vars ? { query, variables: vars } : { query };
    });
}

/** Operations: half built from valid choices only (so they run and reach the upstream), half hostile. */
export const operation: fc.Arbitrary<Operation> = fc.oneof(build(false), build(true));

/** Operations that read only: a mutation run again creates another pet. */
export const query: fc.Arbitrary<Operation> = operation.filter((op) => !op.query.startsWith('mutation'));

/** One byte-level edit of a body. */
type Edit =
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'duplicate'; at: number; length: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('duplicate' as const),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 40 }),
  }),
);

function applyEdit(body: Buffer, e: Edit): Buffer {
  const at = body.length === 0 ? 0 : e.at % body.length;
  switch (e.kind) {
    case 'set': {
      const copy = Buffer.from(body);
      if (copy.length) copy[at] = e.byte;
      return copy;
    }
    case 'insert':
      return Buffer.concat([body.subarray(0, at), e.bytes, body.subarray(at)]);
    case 'delete':
      return Buffer.concat([body.subarray(0, at), body.subarray(at + e.length)]);
    case 'truncate':
      return body.subarray(0, at);
    case 'duplicate':
      return Buffer.concat([body.subarray(0, at + e.length), body.subarray(at)]);
  }
}

/** Valid request bodies, then bent: byte edits, or a JSON value swapped into one of the params. */
export const mutatedBody: fc.Arbitrary<Buffer> = fc.oneof(
  fc
    .tuple(operation, fc.array(edit, { minLength: 1, maxLength: 4 }))
    .map(([op, edits]) => edits.reduce(applyEdit, Buffer.from(JSON.stringify(op)))),
  fc
    .tuple(
      operation,
      fc.constantFrom('query', 'variables', 'operationName', 'extensions', 'documentId'),
      fc.jsonValue({ maxDepth: 3 }),
    )
    .map(([op, key, value]) => Buffer.from(JSON.stringify({ ...op, [key]: value }))),
  fc.jsonValue({ maxDepth: 4 }).map((value) => Buffer.from(JSON.stringify(value) ?? '')),
);
