import {
  type DocumentNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  parse,
} from 'graphql';
import { isLiveQuery } from './live.ts';

/*
 * Reading a trusted document for those who describe it to clients (MCP's tools, the REST
 * endpoints): its fragments by name, and its author's own words.
 */

export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/** The document's own `#` comment lines before its first definition, the author's description. */
export function leadingComment(text: string): string | undefined {
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('#')) break;
    lines.push(trimmed.replace(/^#+\s?/, ''));
  }
  const comment = lines.join(' ').trim();
  return comment === '' ? undefined : comment;
}

/**
 * A document's operations a client can call and get one answer from (its queries and mutations,
 * never a subscription nor a `@live` query), with the document and its fragments; none for a text
 * that does not parse.
 */
export function callableOperations(text: string): {
  document: DocumentNode;
  fragments: Map<string, FragmentDefinitionNode>;
  operations: OperationDefinitionNode[];
} {
  let document: DocumentNode;
  try {
    document = parse(text, { noLocation: true });
  } catch {
    return { document: { kind: Kind.DOCUMENT, definitions: [] }, fragments: new Map(), operations: [] };
  }
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION &&
      definition.operation !== OperationTypeNode.SUBSCRIPTION &&
      !isLiveQuery(definition, undefined),
  );
  return { document, fragments: fragmentsOf(document), operations };
}
