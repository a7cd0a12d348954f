import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLOutputType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { z } from 'zod';
import { LIST_LIMIT } from '../contract/animal-store.ts';

/*
 * GraphQL types as zod schemas, for what describes an operation to a client that reads JSON Schema:
 * an MCP tool's input and output (the SDK turns them into JSON Schema), a REST endpoint's
 * parameters and answer in the OpenAPI document. A field's arguments, an input type's fields, an
 * operation's variables and its selection each have their schema here, once.
 */

/** Ids are int64: a JSON number would round them past 2^53, so they travel as decimal strings. */
export const int64String = () =>
  z
    .string()
    .regex(/^-?\d{1,19}$/)
    .describe('A 64-bit integer as a decimal string (never a JSON number: it would lose digits).');

function scalarInput(name: string, argument: string | undefined): z.ZodType {
  switch (name) {
    case 'ID':
      return int64String();
    case 'Int':
      // The contract bounds every `limit` argument: the model reads the bounds, not a refusal.
      return argument === 'limit'
        ? z.number().int().min(LIST_LIMIT.min).max(LIST_LIMIT.max)
        : z.number().int();
    case 'Float':
      return z.number();
    case 'Boolean':
      return z.boolean();
    default:
      return z.string();
  }
}

/**
 * A variable's type as a tool's input: ids as decimal strings, enums as their GraphQL values,
 * input objects field by field; `argument` names the argument the variable feeds (for its bounds).
 */
export function inputSchemaOf(type: GraphQLInputType, argument?: string): z.ZodType {
  if (isNonNullType(type)) return inputSchemaOf(type.ofType, argument);
  if (isListType(type)) return z.array(inputSchemaOf(type.ofType, argument));
  if (isEnumType(type)) return z.enum(type.getValues().map((value) => value.name) as [string, ...string[]]);
  // Strict, as GraphQL is: it refuses a field the input type does not have.
  if (isInputObjectType(type)) return z.strictObject(inputShapeOf(Object.values(type.getFields())));
  return scalarInput(isScalarType(type) ? type.name : 'String', argument);
}

/**
 * Named inputs (a field's arguments, an input type's fields) as a tool's input, each typed and
 * described as the schema says; optional unless non-null without a default, as GraphQL has it.
 */
export function inputShapeOf(
  inputs: readonly (GraphQLArgument | GraphQLInputField)[],
): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const input of inputs) {
    const inner = inputSchemaOf(input.type, input.name);
    const described = input.description ? inner.describe(input.description) : inner;
    const required = isNonNullType(input.type) && input.defaultValue === undefined;
    shape[input.name] = required ? described : described.optional();
  }
  return shape;
}

function scalarOutput(name: string): z.ZodType {
  if (name === 'ID') return int64String();
  if (name === 'Int' || name === 'Float') return z.number();
  if (name === 'Boolean') return z.boolean();
  return z.string();
}

/** The fields a selection set asks for by response key, fragments expanded (merged fields share a key). */
function fieldsByKey(
  selections: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  into = new Map<string, FieldNode[]>(),
): Map<string, FieldNode[]> {
  for (const selection of selections.selections) {
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      into.set(key, [...(into.get(key) ?? []), selection]);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      fieldsByKey(selection.selectionSet, fragments, into);
    } else {
      const fragment = fragments.get(selection.name.value);
      if (fragment) fieldsByKey(fragment.selectionSet, fragments, into);
    }
  }
  return into;
}

/** What an object type's selection answers, as a zod object of its response keys. */
export function objectSchemaOf(
  type: GraphQLOutputType,
  selections: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): z.ZodObject {
  const fields = isObjectType(type) ? type.getFields() : {};
  const shape: Record<string, z.ZodType> = {};
  for (const [key, nodes] of fieldsByKey(selections, fragments)) {
    const name = nodes[0]?.name.value ?? key;
    const field = fields[name];
    if (name === '__typename' || field === undefined) {
      shape[key] = z.string();
      continue;
    }
    const merged: SelectionSetNode = {
      kind: Kind.SELECTION_SET,
      selections: nodes.flatMap((node) => node.selectionSet?.selections ?? []),
    };
    shape[key] = outputSchemaOf(field.type, merged, fragments);
  }
  return z.object(shape);
}

function outputSchemaOf(
  type: GraphQLOutputType,
  selections: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  nullable = true,
): z.ZodType {
  if (isNonNullType(type)) return outputSchemaOf(type.ofType, selections, fragments, false);
  const schema = isListType(type)
    ? z.array(outputSchemaOf(type.ofType, selections, fragments))
    : isEnumType(type)
      ? z.enum(type.getValues().map((value) => value.name) as [string, ...string[]])
      : isScalarType(type)
        ? scalarOutput(type.name)
        : objectSchemaOf(type, selections, fragments);
  return nullable ? schema.nullable() : schema;
}
