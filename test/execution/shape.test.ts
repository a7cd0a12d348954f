// @tier unit

import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { documentShape, renaming } from '../../src/execution/shape.ts';

const shape = (text: string) => documentShape(parse(text))?.key;

describe('a document’s shape', () => {
  it('is the same for documents that differ only in what their aliases are called', () => {
    expect(shape('{ a: pets(limit: 2) { id } }')).toBe(shape('{ zz_91: pets(limit: 2) { id } }'));
    expect(shape('{ a: pets { x: id y: name } }')).toBe(shape('{ b: pets { p: id q: name } }'));
  });

  it('keeps which fields share a response name, where aliases stand, and everything else', () => {
    const base = shape('{ a: pets(limit: 1) { id } b: pets(limit: 2) { id } }');
    for (const other of [
      // Two response names that are one: invalid where the first is valid.
      '{ a: pets(limit: 1) { id } a: pets(limit: 2) { id } }',
      '{ a: pets(limit: 1) { id } pets(limit: 2) { id } }',
      '{ a: pets(limit: 1) { id } b: pets(limit: 3) { id } }',
      '{ a: pets(limit: 1) { id } b: pets(limit: 2) { name } }',
      'query Q { a: pets(limit: 1) { id } b: pets(limit: 2) { id } }',
    ])
      expect(shape(other), other).not.toBe(base);
    // An alias that is another field's name shares its response name; a new alias does not.
    expect(shape('{ pets { name: id name } }')).not.toBe(shape('{ pets { other: id name } }'));
    expect(shape('{ pets { id } }')).not.toBe(shape('{ pets { a: id } }'));
  });

  it('forgets spacing, comments and what graphql-jit marks on nodes it compiled', () => {
    expect(shape('# hi\n{\n  a : pets( limit : 2 ) { id }\n}')).toBe(shape('{ a: pets(limit: 2) { id } }'));
    const document = parse('{ a: pets(limit: 2) { id } }');
    const before = documentShape(document)?.key;
    Object.assign(document.definitions[0] as object, { __internalShouldInclude: [] });
    expect(documentShape(document)?.key).toBe(before);
  });

  it('keeps string values whole, whatever they hold', () => {
    expect(shape('{ a(x: "1) (Name value=1:2") }')).not.toBe(shape('{ a(x: "1") }'));
    expect(shape('{ a(x: """b""") }')).not.toBe(shape('{ a(x: "b") }'));
  });

  it('names each response name of one document by the other’s at its place', () => {
    const from = documentShape(parse('{ a: pets { id x: name } b: pets { id } }'))?.names ?? [];
    const to = documentShape(parse('{ p: pets { id y: name } q: pets { id } }'))?.names ?? [];
    expect(from).toEqual(['a', 'id', 'x', 'b']);
    expect(renaming(from, to)).toEqual(
      new Map([
        ['a', 'p'],
        ['id', 'id'],
        ['x', 'y'],
        ['b', 'q'],
      ]),
    );
    expect(renaming(from, from)).toBeUndefined();
  });

  it('is none for a document too large to remember', () => {
    const fields = Array.from({ length: 600 }, (_, index) => `f${index}: id`).join(' ');
    expect(shape(`{ pets { ${fields} } }`)).toBeUndefined();
  });
});
