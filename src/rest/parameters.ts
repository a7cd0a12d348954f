import {
  GraphQLBoolean,
  GraphQLFloat,
  type GraphQLInputType,
  GraphQLInt,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
} from 'graphql';
import type { RestOperation } from './operations.ts';

/*
 * A GET's query parameters as the operation's variables, typed by their GraphQL types: a value
 * that cannot be one (`limit=many`, `status=LOST`) is refused naming the parameter, before any
 * GraphQL request runs, let alone an upstream call.
 */

/** Parameters that choose the answer's form, not a variable. */
export const FORM_PARAMETERS: ReadonlySet<string> = new Set(['format']);

const INT = /^-?\d{1,10}$/;
const INT_MAX = 2 ** 31 - 1;

/** One value as its type takes it, or the sentence saying why it cannot be. */
function typedValue(
  name: string,
  text: string,
  type: GraphQLInputType,
): { value: unknown } | { problem: string } {
  const named = getNullableType(type);
  if (named === GraphQLInt) {
    const number = Number(text);
    return INT.test(text) && Math.abs(number) <= INT_MAX
      ? { value: number }
      : { problem: `parameter ${name} must be a 32-bit integer, got ${JSON.stringify(text.slice(0, 40))}` };
  }
  if (named === GraphQLFloat) {
    const number = Number(text);
    return text.trim() !== '' && Number.isFinite(number)
      ? { value: number }
      : { problem: `parameter ${name} must be a number, got ${JSON.stringify(text.slice(0, 40))}` };
  }
  if (named === GraphQLBoolean) {
    return text === 'true' || text === 'false'
      ? { value: text === 'true' }
      : { problem: `parameter ${name} must be true or false, got ${JSON.stringify(text.slice(0, 40))}` };
  }
  if (isEnumType(named)) {
    const names = named.getValues().map((value) => value.name);
    return names.includes(text)
      ? { value: text }
      : {
          problem: `parameter ${name} must be one of ${names.join(', ')}, got ${JSON.stringify(text.slice(0, 40))}`,
        };
  }
  if (isInputObjectType(named) || isListType(named)) {
    return { problem: `parameter ${name} is an object: send it as JSON in the body of a POST to /graphql` };
  }
  // ID, String and any other scalar: the text as given (ids stay exact past 2^53).
  return { value: text };
}

/** The operation's variables from a query string, or the first problem with it. */
export function variablesOf(
  operation: RestOperation,
  search: URLSearchParams,
): { variables: Record<string, unknown> } | { problem: string } {
  const known = new Set(operation.parameters.map((parameter) => parameter.name));
  for (const name of new Set(search.keys())) {
    if (!known.has(name) && !FORM_PARAMETERS.has(name)) {
      const takes = known.size ? `takes ${[...known].join(', ')}` : 'takes no parameters';
      return {
        problem: `unknown parameter ${JSON.stringify(name.slice(0, 40))}: ${operation.name} ${takes}`,
      };
    }
  }
  const variables: Record<string, unknown> = {};
  for (const parameter of operation.parameters) {
    const given = search.getAll(parameter.name);
    if (given.length === 0) {
      if (parameter.required) return { problem: `parameter ${parameter.name} is required` };
      continue;
    }
    if (given.length > 1) return { problem: `parameter ${parameter.name} is given ${given.length} times` };
    const read = typedValue(parameter.name, given[0] as string, parameter.type);
    if ('problem' in read) return read;
    variables[parameter.name] = read.value;
  }
  return { variables };
}
