import {
  type DocumentNode,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  getOperationAST,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { CODES } from '../../codes.ts';
import { requestError, variablePath } from '../../schema/errors.ts';

// Every `ID` in this schema is an int64 (builder.ts). graphql-js accepts a JSON number for an ID
// variable and turns it into a string, but a JSON number past 2^53 was already rounded when the
// request body was parsed: 9007199254740993 arrives as 9007199254740992, a different pet. Nothing
// after the parser can get the digits back, so such a variable is refused with a message that
// says why, instead of silently meaning another id (or a puzzling "not a 64-bit integer").

/**
 * The first `ID` position in `variables` holding a JSON number past 2^53, as a request error
 * (BAD_USER_INPUT, 400), or undefined. Safe integers are fine: they print exactly.
 */
export function roundedInt64Variable(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): GraphQLError | undefined {
  const definitions = getOperationAST(document, operationName)?.variableDefinitions;
  if (!variables || !definitions?.length) return undefined;
  for (const definition of definitions) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    const path = type && findRounded(type, variables[name], []);
    if (path) return roundedError(name, path.keys, path.value);
  }
  return undefined;
}

/** Refuses, before anything runs, an operation whose int64 variables were rounded (see above). */
export function useExactInt64Variables(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = roundedInt64Variable(args.schema, args.document, args.operationName, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}

function findRounded(
  type: GraphQLInputType,
  value: unknown,
  keys: Array<string | number>,
): { keys: Array<string | number>; value: number } | undefined {
  if (value === null || value === undefined) return undefined;
  if (isNonNullType(type)) return findRounded(type.ofType, value, keys);
  if (isListType(type)) {
    if (!Array.isArray(value)) return findRounded(type.ofType, value, keys);
    for (const [index, item] of value.entries()) {
      const found = findRounded(type.ofType, item, [...keys, index]);
      if (found) return found;
    }
    return undefined;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object') return undefined;
    const fields = type.getFields();
    for (const [key, field] of Object.entries(fields)) {
      const found = findRounded(field.type, (value as Record<string, unknown>)[key], [...keys, key]);
      if (found) return found;
    }
    return undefined;
  }
  // Smaller fractions (1.5) are left to graphql-js, which refuses them as not an ID.
  return type.name === 'ID' && typeof value === 'number' && Math.abs(value) > Number.MAX_SAFE_INTEGER
    ? { keys, value }
    : undefined;
}

function roundedError(variable: string, keys: Array<string | number>, value: number): GraphQLError {
  const at = keys.length > 0 ? ` at "${keys.join('.')}"` : '';
  return requestError(
    CODES.BAD_USER_INPUT,
    `Variable "$${variable}"${at} is a JSON number past 2^53, which JSON parsers round before anyone ` +
      `reads it (it arrived as ${value}). Send 64-bit integers as strings, such as "9223372036854775807".`,
    { extensions: { argument: variablePath(variable, keys) } },
  );
}
