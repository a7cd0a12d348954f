import {
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  isInputObjectType,
  isNonNullType,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  print,
  TypeInfo,
  typeFromAST,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { z } from 'zod';
import type { WriteRoute } from '../contract/routes.ts';
import { callableOperations, fragmentsOf, leadingComment } from '../schema/documents.ts';
import { declaredWriteRoute } from '../schema/upstream-field.ts';
import { inputSchemaOf, objectSchemaOf } from '../schema/zod-types.ts';
import { type ToolSpec, writesThrough } from './tool.ts';

/*
 * A trusted-documents manifest as MCP tools: each operation in it is a tool named after the
 * operation, its input the operation's variables, its output what the operation selects. A call
 * sends the document's id, so it runs with PERSISTED_OPERATIONS=require too.
 */

/** `CheapestSold` → `cheapest_sold`, `HTTPPets` → `http_pets`: how MCP clients name tools. */
export function toolNameOf(operationName: string): string {
  return operationName
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** What each variable feeds (an argument or an input field: its bounds, its description) and the deprecated fields used. */
function usage(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode) {
  const argumentOf = new Map<string, Fed>();
  const deprecated: string[] = [];
  const typeInfo = new TypeInfo(schema);
  const walk = { kind: Kind.DOCUMENT, definitions: [operation, ...fragmentsOf(document).values()] } as const;
  visit(
    walk,
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        const fed = typeInfo.getArgument();
        if (node.value.kind === Kind.VARIABLE && fed) argumentOf.set(node.value.name.value, fed);
      },
      ObjectField(node) {
        const parent = getNamedType(typeInfo.getParentInputType());
        const fed = isInputObjectType(parent) ? parent.getFields()[node.name.value] : undefined;
        if (node.value.kind === Kind.VARIABLE && fed) argumentOf.set(node.value.name.value, fed);
      },
      Field() {
        const field = typeInfo.getFieldDef();
        const parent = typeInfo.getParentType();
        if (field?.deprecationReason)
          deprecated.push(`${parent?.name}.${field.name}: ${field.deprecationReason}`);
      },
    }),
  );
  return { argumentOf, deprecated };
}

/** What a variable is passed to: an argument, or a field of an input object. */
type Fed = GraphQLArgument | GraphQLInputField;

/** Without the author's words: the operation itself, and what the schema says of its root fields. */
function describe(
  schema: GraphQLSchema,
  text: string,
  operation: OperationDefinitionNode,
  deprecated: string[],
): string {
  const root = schema.getRootType(operation.operation);
  const fields = operation.selectionSet.selections.flatMap((selection) =>
    selection.kind === Kind.FIELD ? [root?.getFields()[selection.name.value]] : [],
  );
  const own =
    leadingComment(text) ??
    [
      `The trusted ${operation.operation} ${operation.name?.value ?? ''}: ${print(operation.selectionSet).replace(/\s+/g, ' ')}.`,
      ...fields.flatMap((field) =>
        field?.description ? [`${field.name}: ${field.description.split('\n')[0]}`] : [],
      ),
    ].join(' ');
  const warning = deprecated.length
    ? ` Uses a deprecated field (${deprecated.join('; ')}): it still answers, and each use is counted.`
    : '';
  const asks =
    operation.operation === OperationTypeNode.MUTATION ? ' It changes the store: ask the user first.' : '';
  return own + warning + asks;
}

/** Each variable as the schema types it, described as what it feeds is. */
function inputOf(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  argumentOf: ReadonlyMap<string, Fed>,
): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (type === undefined) continue;
    const fed = argumentOf.get(name);
    const typed = inputSchemaOf(type, fed?.name);
    const schemaOf = fed?.description ? typed.describe(fed.description) : typed;
    const required = isNonNullType(type) && definition.defaultValue === undefined;
    shape[name] = required ? schemaOf : schemaOf.optional();
  }
  return shape;
}

/** One tool per query and mutation of the manifest (subscriptions answer more than once: none). */
function toolsOfDocument(schema: GraphQLSchema, id: string, text: string): ToolSpec[] {
  const { document, fragments, operations } = callableOperations(text);
  return operations.flatMap((operation) => {
    const root = schema.getRootType(operation.operation);
    if (!root) return [];
    const operationName = operation.name?.value;
    const { argumentOf, deprecated } = usage(schema, document, operation);
    const name = operationName
      ? toolNameOf(operationName)
      : `operation_${id.replace(/^sha256:/, '').slice(0, 12)}`;
    return [
      {
        name,
        title: operationName ?? name,
        description: describe(schema, text, operation, deprecated),
        input: inputOf(schema, operation, argumentOf),
        output: objectSchemaOf(root, operation.selectionSet, fragments),
        readOnly: operation.operation === OperationTypeNode.QUERY,
        writes: writesThrough(routesWritten(root, operation)),
        request: (args) => ({ documentId: id, ...(operationName ? { operationName } : {}), variables: args }),
      } satisfies ToolSpec,
    ];
  });
}

/** The routes an operation's root fields declare they write through (none for a query). */
function routesWritten(root: GraphQLObjectType, operation: OperationDefinitionNode): WriteRoute[] {
  return operation.selectionSet.selections.flatMap((selection) => {
    if (selection.kind !== Kind.FIELD) return [];
    const field = root.getFields()[selection.name.value];
    const route = field && declaredWriteRoute(field);
    return route ? [route] : [];
  });
}

/**
 * Every query and mutation of a trusted-documents manifest as a tool, in the manifest's order; an
 * operation whose tool name an earlier one took is left out (a name must call one document).
 */
export function operationsAsTools(documents: ReadonlyMap<string, string>, schema: GraphQLSchema): ToolSpec[] {
  const tools = new Map<string, ToolSpec>();
  for (const [id, text] of documents) {
    for (const tool of toolsOfDocument(schema, id, text))
      if (!tools.has(tool.name)) tools.set(tool.name, tool);
  }
  return [...tools.values()];
}
