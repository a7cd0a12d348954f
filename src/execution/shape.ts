import { type ASTNode, type DocumentNode, Kind } from 'graphql';
import { QueryDocumentKeys } from 'graphql/language/ast.js';

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

/** What a node holds besides other nodes: a name's or value's text, a block string, an operation. */
const SCALARS = ['value', 'block', 'operation'] as const;

/**
 * Walks the nodes graphql-js defines for each kind (QueryDocumentKeys, its visitor's own map), so
 * nothing else on a node counts: not where it stands (`loc`), nor what graphql-jit marks on nodes
 * it compiled (`__internalShouldInclude`), which the parse cache then hands out with the
 * document. Texts are written with their length, so no text can pass for the structure around it.
 * Undefined for a document too large to remember.
 */
export function documentShape(document: DocumentNode): DocumentShape | undefined {
  const names = new Map<string, number>();
  let key = '';
  const walk = (node: ASTNode): void => {
    if (key.length > MAX_SHAPE_LENGTH) return;
    key += `(${node.kind}`;
    const fields = node as unknown as Record<string, unknown>;
    for (const scalar of SCALARS) {
      if (fields[scalar] === undefined) continue;
      const text = String(fields[scalar]);
      key += ` ${scalar}=${text.length}:${text}`;
    }
    if (node.kind === Kind.FIELD) {
      const response = (node.alias ?? node.name).value;
      let order = names.get(response);
      if (order === undefined) {
        order = names.size;
        names.set(response, order);
      }
      key += node.alias ? ` alias=${order}` : ` response=${order}`;
    }
    for (const child of QueryDocumentKeys[node.kind] as readonly string[]) {
      if (node.kind === Kind.FIELD && child === 'alias') continue;
      const value = fields[child] as ASTNode | readonly ASTNode[] | undefined;
      if (value === undefined) continue;
      key += ` ${child}:`;
      if (Array.isArray(value)) {
        key += '[';
        for (const item of value) walk(item);
        key += ']';
      } else walk(value as ASTNode);
    }
    key += ')';
  };
  walk(document);
  return key.length > MAX_SHAPE_LENGTH ? undefined : { key, names: [...names.keys()] };
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
