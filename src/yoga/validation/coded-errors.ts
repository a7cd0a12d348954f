import {
  type ASTVisitor,
  coerceInputValue,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  getOperationAST,
  typeFromAST,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { CODES } from '../../codes.ts';
import { requestError, variablePath } from '../../schema/errors.ts';

/**
 * Request-level errors that graphql-js raises without a code, given one here so every error a
 * client sees carries a documented `extensions.code`:
 * - variable coercion errors (`Variable "$id" of required type "ID!" was not provided.`) become
 *   BAD_USER_INPUT with a 400 and, as a field's refused argument does, `argument`: the path inside
 *   the variables of the value refused (`input.name` for a NewPetInput `$input` without a name), so a
 *   form puts every input error beside its field the same way;
 * - "Did you mean …?" hints are dropped from every message, validation's (fields, arguments, types,
 *   enum literals, input fields) and variable coercion's (enum values, input fields): with
 *   introspection off they would reveal schema names one guess at a time. graphql-armor's
 *   block-field-suggestions only covered validation and left "[Suggestion hidden]" behind.
 * It also counts every directive written in the document: graphql-armor's per-operation count
 * skips directives on repeated spreads of a fragment it has already counted. And, before Yoga picks
 * the status, what Yoga itself decided against the table is set back: its 405s (a method /graphql
 * does not take, a mutation over GET), coded BAD_REQUEST, get the table's code for a 405; MAX_TOKENS's
 * refusal, which Yoga marks as a spec parse error once the parse is done (`spec ||= true`, answered
 * 200 to application/json), gets back its own `spec: false` (yoga/validation/limits.ts).
 */
export function useCodedRequestErrors(maxDirectives: number): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(directivesInDocumentRule(maxDirectives));
      return ({ result, setResult }) => {
        if (result.length === 0 || !result.some(hasSuggestion)) return;
        setResult(result.map((error) => withoutSuggestion(error)));
      };
    },
    onExecute({ args }) {
      return { onExecuteDone: ({ result, setResult }) => codeRequestErrors(args, result, setResult) };
    },
    // A subscription's variables are coerced by subscribe, not execute: the same errors, worded
    // the same way (its result is then one ExecutionResult, not a stream).
    onSubscribe({ args }) {
      return { onSubscribeResult: ({ result, setResult }) => codeRequestErrors(args, result, setResult) };
    },
    onResultProcess({ result }) {
      for (const one of Array.isArray(result) ? result : [result]) {
        for (const error of ('errors' in one && one.errors) || []) {
          const http = error.extensions?.http as { status?: number; spec?: boolean } | undefined;
          if (http?.status === 405)
            (error.extensions as { code?: string }).code = CODES.METHOD_NOT_ALLOWED.code;
          else if (http && error.extensions.code === CODES.TOKEN_LIMIT_EXCEEDED.code) http.spec = false;
        }
      }
    },
  };
}

/** Gives the errors that stopped a request before any field ran their code, argument and plain message. */
function codeRequestErrors(
  args: ExecutionArgs,
  result: ExecutionResult | AsyncIterableIterator<ExecutionResult>,
  setResult: (result: ExecutionResult) => void,
): void {
  // Only results without data (never a stream): these errors stopped the request before any field ran.
  if (!('errors' in result) || !result.errors || result.data !== undefined) return;
  if (result.errors.every((error) => error.extensions?.code !== undefined && !hasSuggestion(error))) return;
  const argumentOf = variableArguments(args.schema, args.document, args.operationName, args.variableValues);
  setResult({
    ...result,
    errors: result.errors.map((error) => {
      if (error.extensions?.code !== undefined) return withoutSuggestion(error);
      const { argument, message = error.message } = argumentOf(error.message) ?? {};
      return new GraphQLError(message.replace(SUGGESTION, ''), {
        nodes: error.nodes ?? null,
        extensions: {
          ...error.extensions,
          code: CODES.BAD_USER_INPUT.code,
          ...(argument === undefined ? {} : { argument }),
          http: { status: CODES.BAD_USER_INPUT.status },
        },
      });
    }),
  });
}

const SUGGESTION = / ?Did you mean .*$/s;

/** graphql-js's variable errors name the variable first (a GraphQL Name: no quote can occur in it). */
const VARIABLE = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)" (got invalid value|of )/;
/** The input field a coercion error is about, when it names one: missing, or not in the type. */
const MISSING = /^Field "(.*)" of required type "([^"]*)" was not provided\./s;
const UNKNOWN = /^Field "(.*)" is not defined by type "([^"]*)"\./s;

interface Refused {
  argument: string;
  /** Said of the field itself, as a form shows it beside that field; graphql-js's otherwise. */
  message?: string;
}

/**
 * For each of graphql-js's variable errors, in the order it raised them, the path of the value it
 * refused (and, for a field missing or unknown, a message about that field). Its message prints the path after the refused value, which a string inside that value
 * could imitate, so the paths are taken from coercing the variable again here (only when coercion
 * has already failed), where graphql-js hands each error its path as data.
 */
function variableArguments(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): (message: string) => Refused | undefined {
  const pending = new Map<string, Refused[]>();
  const definitions = getOperationAST(document, operationName)?.variableDefinitions ?? [];
  return (message) => {
    const [, name, kind] = VARIABLE.exec(message) ?? [];
    if (name === undefined) return undefined;
    // Not provided, or null where a value is required: the variable itself.
    if (kind !== 'got invalid value') return { argument: name };
    let paths = pending.get(name);
    if (paths === undefined) {
      paths = [];
      const definition = definitions.find((d) => d.variable.name.value === name);
      const type = definition && (typeFromAST(schema, definition.type) as GraphQLInputType | undefined);
      if (type && variables && Object.hasOwn(variables, name)) {
        const found = paths;
        coerceInputValue(variables[name], type, (path, _value, error) => {
          const [, missing, missingType] = MISSING.exec(error.message) ?? [];
          const [, unknown, inputType] = UNKNOWN.exec(error.message) ?? [];
          if (missing !== undefined) {
            const argument = variablePath(name, [...path, missing]);
            found.push({ argument, message: `${argument} is required (${missingType}).` });
          } else if (unknown !== undefined) {
            const argument = variablePath(name, [...path, unknown]);
            found.push({ argument, message: `${argument} is not a field of ${inputType}.` });
          } else {
            found.push({ argument: variablePath(name, path) });
          }
        });
      }
      pending.set(name, paths);
    }
    return paths.shift();
  };
}

const hasSuggestion = (error: Error) => SUGGESTION.test(error.message);

function withoutSuggestion(error: GraphQLError): GraphQLError {
  if (!hasSuggestion(error)) return error;
  return new GraphQLError(error.message.replace(SUGGESTION, ''), {
    nodes: error.nodes ?? null,
    extensions: error.extensions,
  });
}

function directivesInDocumentRule(max: number) {
  return (context: ValidationContext): ASTVisitor => {
    let count = 0;
    return {
      Directive(node) {
        count += 1;
        if (count === max + 1) {
          context.reportError(
            requestError(
              CODES.DIRECTIVE_LIMIT_EXCEEDED,
              `Directives limit of ${max} exceeded in the document.`,
              { nodes: node },
            ),
          );
        }
      },
    };
  };
}
