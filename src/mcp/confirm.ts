import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ToolSpec } from './tool.ts';

/*
 * A tool that changes the store asks its user first, where the client can ask (2026-07-28's input
 * required results): the first call answers a question and sends nothing upstream; the client
 * calls again with the user's answer and the signed state the question came with. A client that
 * declares no elicitation (every 2025 client) is served as before: its host asks by the tool's
 * annotations.
 */

/** What the user answers: a form of one yes/no field. */
const CONFIRMATION = z.object({
  confirm: z.boolean().describe('Yes: do it now. No: change nothing.'),
});

/** What the signed state holds: which tool, with which arguments, for which caller, was asked about. */
interface Asked {
  digest: string;
}

/** The signer and checker of the state a question carries. */
export type Confirmations = RequestStateCodec<Asked>;

/** How long a question stays answerable: a person reads it, perhaps after a coffee. */
const ANSWER_WITHIN_SECONDS = 600;

/**
 * The signer of the state questions carry (HMAC-SHA256, the SDK's own codec): `secret` is
 * MCP_STATE_SECRET or the workers' shared one, so an answer may reach any worker or instance that
 * shares it; without either, this process's own (an answer then must reach this process).
 */
export function createConfirmations(secret: string | undefined): Confirmations {
  const key = secret
    ? createHmac('sha256', secret).update('pet-gateway mcp confirmation').digest()
    : randomBytes(32);
  return createRequestStateCodec<Asked>({ key, ttlSeconds: ANSWER_WITHIN_SECONDS });
}

/**
 * What the question was about, as one digest: the tool, its arguments (in a stable order) and the
 * caller's key, so an answer cannot be moved to other arguments or to another caller.
 */
function digestOf(tool: ToolSpec, args: Record<string, unknown>, authorization: string): string {
  const sorted = Object.fromEntries(Object.entries(args).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256')
    .update(JSON.stringify([tool.name, sorted, authorization]))
    .digest('base64url');
}

/** The question a person reads: what the tool will do, with every argument it was given. */
function questionOf(tool: ToolSpec, args: Record<string, unknown>): string {
  const given = Object.entries(args)
    .map(([name, value]) => `${name}: ${JSON.stringify(value)}`)
    .join(', ');
  return `${tool.title}${given ? ` (${given})` : ''}? Nothing is sent to the animal store until you confirm.`;
}

/** Whether the request's client said it can ask its user (2026-07-28's `_meta` capabilities). */
function canAsk(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined;
  return capabilities?.elicitation !== undefined;
}

function refusedWith(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * Before a tool that changes the store runs: undefined to run it (a read, a client that cannot
 * ask, or the user said yes to exactly this call); otherwise what to answer instead (the
 * question, or a tool error saying that nothing was done).
 */
export async function confirmationFirst(
  tool: ToolSpec,
  args: Record<string, unknown>,
  ctx: ServerContext,
  authorization: string,
  confirmations: Confirmations,
): Promise<InputRequiredResult | CallToolResult | undefined> {
  if (tool.readOnly || !canAsk(ctx)) return undefined;
  const digest = digestOf(tool, args, authorization);
  // Verified by the server before this runs (server.ts gives it the codec's verify).
  const asked = ctx.mcpReq.requestState<Asked>();
  const answer = ctx.mcpReq.inputResponses?.confirm as { action?: unknown; content?: unknown } | undefined;
  if (asked === undefined || answer === undefined) {
    return inputRequired({
      inputRequests: {
        confirm: inputRequired.elicit({ message: questionOf(tool, args), requestedSchema: CONFIRMATION }),
      },
      requestState: await confirmations.mint({ digest }),
    });
  }
  if (asked.digest !== digest) {
    return refusedWith(
      'This confirmation was given for other arguments or another key: nothing was done. Call the tool again to ask anew.',
    );
  }
  const content = CONFIRMATION.safeParse(answer.content);
  if (answer.action !== 'accept' || !content.success || !content.data.confirm) {
    return refusedWith(`The user declined: nothing was done (${tool.name} was not run).`);
  }
  return undefined;
}
