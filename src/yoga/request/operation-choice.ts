import { type DocumentNode, type GraphQLError, getOperationAST, Kind, OperationTypeNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { CODES } from '../../codes.ts';
import { requestError, subscriptionNotSupported } from '../../schema/errors.ts';

/** Operation names a message lists before "…": a document may hold hundreds. */
const LISTED_NAMES = 10;

/** Characters of one name a message shows: names are the caller's text, and may be thousands long. */
const NAME_SHOWN = 100;

const shown = (name: string) => (name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name);

/**
 * Says which operation could not be chosen, and why, where Yoga answers only "Could not determine
 * what operation to execute." (OPERATION_RESOLUTION_FAILURE, 400). Runs right after parsing, as
 * Yoga's own check does, and before it. Without `subscriptions` (LIVE=off) a subscription is
 * refused here with its code.
 */
export function useOperationChoice(subscriptions: boolean): Plugin {
  return {
    onParse({ context }) {
      return ({ result }) => {
        if (!result || result instanceof Error) return;
        const { operationName } = (context as { params?: { operationName?: string | null } }).params ?? {};
        const document = result as DocumentNode;
        const error = operationChoiceError(document, operationName);
        if (error) throw error;
        const operation = getOperationAST(document, operationName);
        if (!subscriptions && operation?.operation === OperationTypeNode.SUBSCRIPTION)
          throw subscriptionNotSupported(operation);
      };
    },
  };
}

/** Why `operationName` picks no operation of `document`, or undefined when it picks one. */
export function operationChoiceError(
  document: DocumentNode,
  operationName: string | null | undefined,
): GraphQLError | undefined {
  if (getOperationAST(document, operationName)) return undefined;
  const names = document.definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION ? [definition.name?.value] : [],
  );
  const listed = names
    .slice(0, LISTED_NAMES)
    .map((name) => (name === undefined ? 'an unnamed operation' : `"${shown(name)}"`))
    .join(', ');
  const more = names.length > LISTED_NAMES ? `, … (${names.length} in all)` : '';
  let message: string;
  if (names.length === 0) {
    message = 'The document holds no operation to run, only fragments.';
  } else if (operationName == null || operationName === '') {
    message = `The document holds ${names.length} operations (${listed}${more}): name the one to run in operationName.`;
  } else {
    // The name is the caller's own text, but it may be long.
    message = `The document holds no operation named "${shown(operationName)}"; it holds ${listed}${more}.`;
  }
  return requestError(CODES.OPERATION_RESOLUTION_FAILURE, message);
}
