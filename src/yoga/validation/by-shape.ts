import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { documentShape } from '../../execution/shape.ts';
import { keyBytes } from '../../policy/prepared-operations.ts';
import { createLru, type Lru, type LruBounds } from '../../stores/lru.ts';

/**
 * Shapes of valid documents remembered per schema. A key is at most MAX_SHAPE_LENGTH characters
 * (execution/shape.ts; a larger document is validated every time), and a flood of new shapes only
 * evicts older ones.
 */
export const VALID_SHAPES: LruBounds = { entries: 512, bytes: 1024 * 1024 };

/**
 * Validation once per document shape, not per document text: a client that writes a new alias into
 * each request (a generated name, a counter) sends a new text every time, which Yoga parses and
 * validates again, though the document differs from one already found valid only in its aliases.
 * Validity does not depend on what the aliases are called, only on which fields share a response
 * name and where aliases stand (the alias limit counts them): the shape keeps both and forgets
 * the names. Only valid outcomes are remembered (an error's message and locations belong to its
 * document); anything else, and a new shape, is validated as before.
 *
 * Last of the plugins: it answers for the rules every plugin before it added (their names are part
 * of the key, as in validation/document-cache.ts).
 */
export function useValidationByShape(): Plugin {
  const bySchema = new WeakMap<GraphQLSchema, Lru<true>>();
  // The parse cache hands back the same document for the same text: a document found valid here
  // is answered without computing its shape again (the validation cache, which runs after this
  // plugin, cannot tell it that it has answered).
  const validDocuments = new WeakMap<DocumentNode, string>();
  return {
    onValidate({ params: { schema, documentAST, rules }, setResult }) {
      const rulesKey = rules?.map((rule: { name: string }) => rule.name).join(',') ?? '';
      if (validDocuments.get(documentAST) === rulesKey) {
        setResult([]);
        return;
      }
      const shape = documentShape(documentAST)?.key;
      if (shape === undefined) return;
      let valid = bySchema.get(schema);
      if (valid === undefined) {
        valid = createLru(VALID_SHAPES, keyBytes);
        bySchema.set(schema, valid);
      }
      const key = `${rulesKey}\u0001${shape}`;
      if (valid.get(key)) {
        validDocuments.set(documentAST, rulesKey);
        setResult([]);
        return;
      }
      const remember = valid;
      return ({ result }) => {
        if (result.length > 0) return;
        remember.set(key, true);
        validDocuments.set(documentAST, rulesKey);
      };
    },
  };
}
