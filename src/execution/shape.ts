import type { DocumentNode } from 'graphql';

/** Documents larger than this get no shape (real operations are far smaller). */
export const MAX_SHAPE_LENGTH = 8192;

/**
 * A document with its response names taken out: `key`, the document as text with every response
 * name replaced by the order of its first appearance and every alias marked as one; `names`, the
 * response names in that order. Two documents share a key when they differ only in what their
 * aliases are called (and in spacing and comments, which the parse drops): they validate alike,
 * pass the same document limits, make the same upstream calls and answer the same tree, under
 * each document's own names.
 */
export interface DocumentShape {
  readonly key: string;
  readonly names: readonly string[];
}

/** Shapes already written, by document: validation and preparation both ask for one. */
const written = new WeakMap<DocumentNode, DocumentShape | null>();

/** The document's shape; undefined for a document too large to remember. */
export function documentShape(document: DocumentNode): DocumentShape | undefined {
  let shape = written.get(document);
  if (shape === undefined) {
    shape = shapeOf(document) ?? null;
    written.set(document, shape);
  }
  return shape ?? undefined;
}

function shapeOf(document: DocumentNode): DocumentShape | undefined {
  const names = new Map<string, number>();
  const parts: string[] = [];
  let length = 0;
  const write = (text: string) => {
    parts.push(text);
    length += text.length;
  };
  const walk = (value: unknown): void => {
    if (length > MAX_SHAPE_LENGTH) return;
    if (Array.isArray(value)) {
      write('[');
      for (const item of value) walk(item);
      write(']');
      return;
    }
    if (typeof value !== 'object' || value === null) {
      write(`${JSON.stringify(value)},`);
      return;
    }
    const node = value as Record<string, unknown> & { kind?: string };
    write('{');
    const field = node.kind === 'Field';
    if (field) {
      const { alias, name } = node as unknown as { alias?: { value: string }; name: { value: string } };
      const response = alias?.value ?? name.value;
      let order = names.get(response);
      if (order === undefined) {
        order = names.size;
        names.set(response, order);
      }
      write(`${alias ? 'alias' : 'response'}:${order},`);
    }
    for (const key in node) {
      // Not the document's own: where it stands, and what graphql-jit marks on nodes it compiled
      // (`__internalShouldInclude`), which Yoga's parse cache then hands out with the document.
      if (key === 'loc' || key.startsWith('__') || (field && key === 'alias')) continue;
      write(`${key}:`);
      walk(node[key]);
    }
    write('}');
  };
  walk(document);
  return length > MAX_SHAPE_LENGTH ? undefined : { key: parts.join(''), names: [...names.keys()] };
}

/**
 * How an answer written under `from`'s response names is written under `to`'s, two documents of
 * one shape: each name to the one at its place. Undefined when they are the same names.
 */
export function renaming(
  from: readonly string[],
  to: readonly string[],
): ReadonlyMap<string, string> | undefined {
  let names: Map<string, string> | undefined;
  for (let i = 0; i < from.length; i++) {
    const before = from[i] as string;
    const after = to[i] as string;
    if (before === after && names === undefined) continue;
    names ??= new Map(from.slice(0, i).map((name) => [name, name]));
    names.set(before, after);
  }
  return names;
}
