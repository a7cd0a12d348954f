import { type DocumentNode, parse } from 'graphql';
import { documentShape, renaming } from '../execution/shape.ts';
import { type ShapedOperation, type Shapes, shapeKey } from '../policy/prepared-operations.ts';

/** The plan found for a new document by its shape, and the document's own names. */
export interface ByShape {
  readonly operation: ShapedOperation;
  /** The plan's response names to the document's; undefined when they are the same. */
  readonly names: ReadonlyMap<string, string> | undefined;
}

/**
 * The plan of a document sent as text that the fast lane has not seen, when its shape has one
 * (Lanes.shapes); undefined for a new shape, or a text that does not parse
 * (Yoga words the error and prepares what runs). Documents are at most
 * MAX_PREPARED_DOCUMENT_LENGTH characters here, so the parse is bounded.
 */
export function preparedByShape(
  shapes: Shapes,
  query: string,
  operationName: string | null | undefined,
): ByShape | undefined {
  let document: DocumentNode;
  try {
    document = parse(query, { noLocation: true });
  } catch {
    return undefined;
  }
  const shape = documentShape(document);
  const found = shape && shapes.planned.get(shapeKey(operationName, shape.key));
  if (!shape || !found) return undefined;
  // An answer object's own key, never its prototype: the plans refuse it for the same reason.
  if (shape.names.includes('__proto__')) return undefined;
  return { operation: found, names: renaming(found.names, shape.names) };
}
