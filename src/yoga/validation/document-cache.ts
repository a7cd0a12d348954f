import { type DocumentNode, GraphQLError, type GraphQLSchema, type Token } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { createLru, type LruBounds } from '../../stores/lru.ts';

/** Document texts kept with their parse (or the parser's refusal) and their validation. */
export const DOCUMENT_CACHE: LruBounds = { entries: 512, bytes: 24 * 1024 * 1024 };

/**
 * What a kept text weighs on the heap, counted from what it holds: the text (two bytes a
 * character); per token of its document, the token and its share of the nodes and locations
 * (under 350 bytes in every shape measured, from dense aliases to a field repeated 900 times); and
 * per kept error, its message and the objects around it. Not per character of the text alone: per
 * character the same documents weigh from 9 to 165 bytes, and a weight made for the densest pushed
 * out the documents that cost most to validate again. Weighed again once its validation is kept.
 */
export function documentBytes(
  text: string,
  entry?: Pick<Entry, 'tokens' | 'parseError' | 'validated'>,
): number {
  let errors = entry?.parseError ? errorBytes(entry.parseError) : 0;
  for (const outcome of entry?.validated.values() ?? [])
    for (const error of outcome.errors) errors += errorBytes(error);
  return 2048 + 2 * text.length + 350 * (entry?.tokens ?? 0) + errors;
}

/** A parsed text's tokens, counted once, when it is first kept. */
export function tokensOf(document: DocumentNode, text: string): number {
  // Parsed without locations: no tokens to count, so the densest a character can be.
  if (document.loc === undefined) return text.length;
  let tokens = 0;
  for (let token: Token | null = document.loc.startToken; token; token = token.next) tokens++;
  return tokens;
}

const errorBytes = (error: KeptError) => 600 + 4 * error.message.length;

/** Rule sets whose outcome one document keeps (they differ only with the server's settings). */
const MAX_RULE_SETS = 4;

/**
 * An error as kept: what a client is shown (its message, where, its extensions) and the document's
 * own nodes. Never the error itself: its stack trace holds the frames that raised it, and through
 * them the request that first sent the document, its body and variables included.
 */
interface KeptError {
  readonly message: string;
  readonly nodes: GraphQLError['nodes'];
  readonly source: GraphQLError['source'];
  readonly positions: GraphQLError['positions'];
  readonly path: GraphQLError['path'];
  readonly extensions: GraphQLError['extensions'];
}

interface Entry {
  readonly text: string;
  readonly document?: DocumentNode;
  /** Its document's tokens (none for a text the parser refused). */
  readonly tokens: number;
  readonly parseError?: KeptError;
  /** Outcomes by the rules' names: the schema validated against and its errors (none: valid). */
  readonly validated: Map<string, { schema: GraphQLSchema; errors: readonly KeptError[] }>;
}

/**
 * Parse and validation once per document text, as Yoga's own `parserAndValidationCache` does
 * (which it replaces: `parserAndValidationCache: false`), but bounded in bytes as well as entries,
 * and keeping of each refusal only what the client is shown. Yoga's kept the thrown errors for an
 * hour, each holding through its stack trace the request that first sent its document.
 *
 * A kept error is rebuilt for every request that gets it, before the hooks after this one run:
 * Yoga's own, which give parse and validation errors their code and status, change the rebuilt
 * error as they changed the first, so the answer's bytes are the same. An error that wraps another
 * (`originalError`) or whose extensions cannot be copied is not kept: its document is checked again.
 *
 * Last of the plugins: it answers for the validation rules every plugin before it added (their
 * names are part of the key, as in Yoga's cache).
 */
export function useDocumentCache(bounds: LruBounds = DOCUMENT_CACHE): Plugin {
  const entries = createLru<Entry>(bounds, documentBytes);
  const entryOf = new WeakMap<DocumentNode, Entry>();
  return {
    onParse({ params: { source }, setParsedDocument, setParseFn }) {
      const text = typeof source === 'string' ? source : source.body;
      const entry = entries.get(text);
      if (entry?.document) return setParsedDocument(entry.document);
      const { parseError } = entry ?? {};
      if (parseError) {
        // Thrown by the parse itself, not here: the hooks after this one see it as they saw the first.
        return setParseFn(() => {
          throw revived(parseError);
        });
      }
      return ({ result }) => {
        if (result instanceof GraphQLError) {
          const kept = keptError(result);
          if (kept) entries.set(text, { text, parseError: kept, tokens: 0, validated: new Map() });
        } else if (result && !(result instanceof Error)) {
          const added: Entry = {
            text,
            document: result,
            tokens: tokensOf(result, text),
            validated: new Map(),
          };
          entries.set(text, added);
          entryOf.set(result, added);
        }
      };
    },
    onValidate({ params: { schema, documentAST, rules }, setResult }) {
      const entry = entryOf.get(documentAST);
      // Only while its text is kept: a document something else still holds is weighed there.
      if (entry === undefined || entries.get(entry.text) !== entry) return;
      const rulesKey = rules?.map((rule: { name: string }) => rule.name).join(',') || '';
      const outcome = entry.validated.get(rulesKey);
      if (outcome !== undefined && outcome.schema === schema) return setResult(outcome.errors.map(revived));
      return ({ result }) => {
        const errors: KeptError[] = [];
        for (const error of result) {
          const kept = keptError(error);
          if (kept === undefined) return;
          errors.push(kept);
        }
        if (entry.validated.size >= MAX_RULE_SETS) return;
        entry.validated.set(rulesKey, { schema, errors });
        // Weighed again with its errors: it may now push older texts out, or not be kept at all.
        entries.set(entry.text, entry);
      };
    },
  };
}

function keptError(error: GraphQLError): KeptError | undefined {
  if (error.originalError != null) return undefined;
  try {
    const { message, nodes, source, positions, path } = error;
    return { message, nodes, source, positions, path, extensions: structuredClone(error.extensions) };
  } catch {
    return undefined;
  }
}

/** A new error, as the kept one was first raised (its extensions a copy: Yoga's hooks change them). */
function revived(kept: KeptError): GraphQLError {
  const { message, nodes, source, positions, path } = kept;
  return new GraphQLError(message, {
    nodes: nodes ?? null,
    source: source ?? null,
    positions: positions ?? null,
    path: path ?? null,
    extensions: structuredClone(kept.extensions),
  });
}
