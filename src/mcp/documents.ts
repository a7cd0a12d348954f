import {
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isLeafType,
  isUnionType,
  type OperationDefinitionNode,
  parse,
} from 'graphql';
import { objectSchemaOf } from '../schema/zod-types.ts';

/*
 * The documents the built-in tools send, written from the schema: a field the schema adds to a type
 * a tool answers is selected, and declared in the tool's output, with no edit of the tools.
 */

/** The fields of `type` a selection names as they are: no arguments, no sub-selection, not deprecated. */
function leafFieldsOf(type: GraphQLObjectType | GraphQLInterfaceType): string[] {
  return Object.values(type.getFields())
    .filter(
      (field) => isLeafType(getNamedType(field.type)) && field.args.length === 0 && !field.deprecationReason,
    )
    .map((field) => field.name);
}

/**
 * What a tool selects of a root field's answer: nothing of a leaf, the leaf fields of an object
 * (`__typename` when it has none, as a selection may not be empty), the type's name of a union.
 */
export function selectionOf(type: GraphQLOutputType): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return '';
  const fields = isUnionType(named) ? [] : leafFieldsOf(named);
  return ` { ${fields.length > 0 ? fields.join(' ') : '__typename'} }`;
}

/** A document of one operation, and what its root field answers (its selection, typed by the schema). */
export function operationOf(schema: GraphQLSchema, text: string) {
  const operation = parse(text, { noLocation: true }).definitions[0] as OperationDefinitionNode;
  const root = schema.getRootType(operation.operation);
  if (!root) throw new Error(`The schema has no ${operation.operation} type.`);
  return { text, output: objectSchemaOf(root, operation.selectionSet, new Map()) };
}
