import { Kind, parse, print, visit } from 'graphql';

/**
 * The same document as `query` but for what its aliases are called, printed anew (other spacing,
 * no comments): a text the fast lane has not seen, of the shape it prepared. A response name that
 * some field also answers under without an alias keeps its name, so fields merge as they did.
 * Undefined when the text does not parse (the case is about the parse).
 */
export function renamedDocument(query: string): string | undefined {
  let document: ReturnType<typeof parse>;
  try {
    document = parse(query);
  } catch {
    return undefined;
  }
  const aliased = new Set<string>();
  const plain = new Set<string>();
  visit(document, {
    Field(node) {
      if (node.alias) aliased.add(node.alias.value);
      else plain.add(node.name.value);
    },
  });
  return print(
    visit(document, {
      Field(node) {
        if (!node.alias || plain.has(node.alias.value)) return undefined;
        return { ...node, alias: { kind: Kind.NAME, value: `${node.alias.value}Renamed` } };
      },
    }),
  );
}
