import { type ASTVisitor, GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Request-level errors that graphql-js raises without a code, given one here so every error a
 * client sees carries a documented `extensions.code`:
 * - variable coercion errors (`Variable "$id" of required type "ID!" was not provided.`) become
 *   BAD_USER_INPUT with a 400;
 * - "Did you mean …?" hints are dropped from every message, validation's (fields, arguments, types,
 *   enum literals, input fields) and variable coercion's (enum values, input fields): with
 *   introspection off they would reveal schema names one guess at a time. graphql-armor's
 *   block-field-suggestions only covered validation and left "[Suggestion hidden]" behind.
 * It also counts every directive written in the document: graphql-armor's per-operation count
 * skips directives on repeated spreads of a fragment it has already counted.
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
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          // Only results without data: these errors stopped the request before any field ran.
          if (!('errors' in result) || !result.errors || result.data !== undefined) return;
          if (result.errors.every((error) => error.extensions?.code !== undefined && !hasSuggestion(error)))
            return;
          setResult({
            ...result,
            errors: result.errors.map((error) =>
              error.extensions?.code === undefined
                ? new GraphQLError(error.message.replace(SUGGESTION, ''), {
                    nodes: error.nodes ?? null,
                    extensions: { ...error.extensions, code: 'BAD_USER_INPUT', http: { status: 400 } },
                  })
                : withoutSuggestion(error),
            ),
          });
        },
      };
    },
  };
}

const SUGGESTION = / ?Did you mean .*$/s;

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
            new GraphQLError(`Directives limit of ${max} exceeded in the document.`, {
              nodes: node,
              extensions: { code: 'DIRECTIVE_LIMIT_EXCEEDED', http: { status: 400 } },
            }),
          );
        }
      },
    };
  };
}

/** The request itself is unusable (body, encoding, media type): answered before GraphQL runs. */
export function badRequest(status: 400 | 413 | 415, code: string, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status } } });
}
