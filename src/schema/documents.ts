import { type DocumentNode, type FragmentDefinitionNode, Kind } from 'graphql';

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
