import { type GraphQLInputType, type GraphQLSchema, Kind, OperationTypeNode, typeFromAST } from 'graphql';
import type { z } from 'zod';
import { callableOperations, leadingComment } from '../schema/documents.ts';
import { objectSchemaOf } from '../schema/zod-types.ts';

/*
 * The trusted-documents manifest as REST endpoints: each named query is `GET /rest/{name}`, each
 * named mutation `POST /rest/{name}`, its variables its parameters. A call runs the document by
 * its id, so it runs with PERSISTED_OPERATIONS=require too.
 */

/** One variable as a parameter: its name, its GraphQL type, whether a call must give it. */
export interface Parameter {
  name: string;
  type: GraphQLInputType;
  required: boolean;
}

export interface RestOperation {
  /** The operation's name: the path's last segment. */
  name: string;
  documentId: string;
  method: 'GET' | 'POST';
  parameters: readonly Parameter[];
  /** What `data` holds when it answers, for the OpenAPI document. */
  output: z.ZodObject;
  /** The document's own leading `#` comment, when it has one. */
  description: string | undefined;
}

function operationsOf(schema: GraphQLSchema, id: string, text: string): RestOperation[] {
  const { fragments, operations } = callableOperations(text);
  return operations.flatMap((operation) => {
    if (operation.name === undefined) return [];
    const root = schema.getRootType(operation.operation);
    if (!root) return [];
    const parameters = (operation.variableDefinitions ?? []).flatMap((definition) => {
      const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
      if (type === undefined) return [];
      const required = definition.type.kind === Kind.NON_NULL_TYPE && definition.defaultValue === undefined;
      return [{ name: definition.variable.name.value, type, required }];
    });
    return [
      {
        name: operation.name.value,
        documentId: id,
        method: operation.operation === OperationTypeNode.QUERY ? 'GET' : 'POST',
        parameters,
        output: objectSchemaOf(root, operation.selectionSet, fragments),
        description: leadingComment(text),
      } satisfies RestOperation,
    ];
  });
}

/**
 * Every named query and mutation of the manifest by name, in the manifest's order; a name an
 * earlier operation took stays that one's (a path must call one document).
 */
export function restOperations(
  documents: ReadonlyMap<string, string>,
  schema: GraphQLSchema,
): ReadonlyMap<string, RestOperation> {
  const operations = new Map<string, RestOperation>();
  for (const [id, text] of documents) {
    for (const operation of operationsOf(schema, id, text)) {
      if (!operations.has(operation.name)) operations.set(operation.name, operation);
    }
  }
  return operations;
}
