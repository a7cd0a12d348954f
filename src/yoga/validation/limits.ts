import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin, maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import {
  type ASTVisitor,
  type GraphQLError,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { type Answered, CODES } from '../../codes.ts';
import type { Limits } from '../../config.ts';
import { useCodedRequestErrors } from './coded-errors.ts';

/**
 * Introspection is exempt from the depth limit (the standard query nests `ofType` deeply) but not
 * unbounded: GraphiQL's and codegen's queries reach depth 13 with fragments flattened.
 */
const MAX_INTROSPECTION_DEPTH = 15;

/**
 * graphql-armor rejects with a code-less GraphQLError; its `onReject` hook is where each rejection
 * gets its documented code and a 400.
 */
function armorOptions(code: Answered) {
  return {
    exposeLimits: true,
    propagateOnRejection: true,
    onReject: [
      (_context: unknown, error: GraphQLError) => {
        // graphql-armor words every limit as a "Syntax Error:", which it is not.
        error.message = error.message.replace(/^Syntax Error: /, '');
        // `spec: false`: a refusal by a limit is the gateway's, a 400 whatever the client accepts,
        // not one of the GraphQL-over-HTTP spec's errors that Yoga answers 200 to application/json.
        Object.assign(error.extensions, { code: code.code, http: { status: code.status, spec: false } });
      },
    ],
  };
}

/**
 * The document limits (MAX_TOKENS, MAX_DEPTH, MAX_ALIASES, MAX_DIRECTIVES), each refusal with its
 * documented code and a 400, before the document is validated against the schema.
 */
export function useDocumentLimits(limits: Limits): Plugin[] {
  return [
    maxTokensPlugin({ n: limits.maxTokens, ...armorOptions(CODES.TOKEN_LIMIT_EXCEEDED) }),
    {
      onValidate({ addValidationRule }) {
        addValidationRule(
          outsideIntrospection(
            maxDepthRule({
              n: limits.maxDepth,
              // Operations of introspection alone are skipped by outsideIntrospection; in any other,
              // `__schema` counts like every field (graphql-armor would skip it, not `__type`).
              ignoreIntrospection: false,
              flattenFragments: true,
              ...armorOptions(CODES.DEPTH_LIMIT_EXCEEDED),
            }),
          ),
        );
      },
    },
    maxDepthPlugin({
      n: MAX_INTROSPECTION_DEPTH,
      ignoreIntrospection: false,
      flattenFragments: true,
      ...armorOptions(CODES.DEPTH_LIMIT_EXCEEDED),
    }),
    // graphql-armor leaves `__typename` out of the count by default, so `{ a0: __typename … a999:
    // __typename }` passed any MAX_ALIASES: every alias counts here, whatever field it names.
    maxAliasesPlugin({ n: limits.maxAliases, allowList: [], ...armorOptions(CODES.ALIAS_LIMIT_EXCEEDED) }),
    maxDirectivesPlugin({ n: limits.maxDirectives, ...armorOptions(CODES.DIRECTIVE_LIMIT_EXCEEDED) }),
    useCodedRequestErrors(limits.maxDirectives),
  ];
}

/**
 * A depth rule that skips operations made of introspection only (`__schema`, `__type`,
 * `__typename`, fragments flattened): graphql-armor's `ignoreIntrospection` exempts `__schema`
 * alone, so `__type(name:) { fields { type { ofType { ofType { name } } } } }` was refused at depth 6.
 */
function outsideIntrospection(rule: (context: ValidationContext) => ASTVisitor) {
  return (context: ValidationContext): ASTVisitor => {
    const visitor = rule(context) as {
      OperationDefinition?: { enter?: (node: OperationDefinitionNode) => void };
    };
    return {
      OperationDefinition: {
        enter(node) {
          if (!onlyIntrospection(node.selectionSet, context, new Set()))
            visitor.OperationDefinition?.enter?.call(visitor, node);
        },
      },
    };
  };
}

function onlyIntrospection(set: SelectionSetNode, context: ValidationContext, seen: Set<string>): boolean {
  return set.selections.every((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value.startsWith('__');
    if (selection.kind === Kind.INLINE_FRAGMENT)
      return onlyIntrospection(selection.selectionSet, context, seen);
    const name = selection.name.value;
    if (seen.has(name)) return true;
    seen.add(name);
    const fragment = context.getFragment(name);
    return fragment == null || onlyIntrospection(fragment.selectionSet, context, seen);
  });
}
