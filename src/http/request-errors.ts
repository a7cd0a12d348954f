import { type ASTVisitor, GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Request-level errors that graphql-js raises without a code, given one here so every error a
 * client sees carries a documented `extensions.code`:
 * - variable coercion errors (`Variable "$id" of required type "ID!" was not provided.`) become
 *   BAD_USER_INPUT with a 400;
 * - "Did you mean …?" hints are dropped from validation messages: with introspection off they
 *   would reveal field and enum names one guess at a time (graphql-armor only hides field hints).
 * It also counts every directive written in the document: graphql-armor's per-operation count
 * skips directives on repeated spreads of a fragment it has already counted.
 */
export function useCodedRequestErrors(maxDirectives: number): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(directivesInDocumentRule(maxDirectives));
      return ({ result, setResult }) => {
        if (result.length === 0 || !result.some((error) => SUGGESTION.test(error.message))) return;
        setResult(result.map((error) => withoutSuggestion(error)));
      };
    },
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          // Only results without data: these errors stopped the request before any field ran.
          if (!('errors' in result) || !result.errors || result.data !== undefined) return;
          if (result.errors.every((error) => error.extensions?.code !== undefined)) return;
          setResult({
            ...result,
            errors: result.errors.map((error) =>
              error.extensions?.code === undefined
                ? new GraphQLError(error.message, {
                    nodes: error.nodes ?? null,
                    extensions: { ...error.extensions, code: 'BAD_USER_INPUT', http: { status: 400 } },
                  })
                : error,
            ),
          });
        },
      };
    },
  };
}

const SUGGESTION = / ?Did you mean .*$/s;

function withoutSuggestion(error: GraphQLError): GraphQLError {
  if (!SUGGESTION.test(error.message)) return error;
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
