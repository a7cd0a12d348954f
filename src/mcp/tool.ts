import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { ZodRawShape, z } from 'zod';
import type { WriteRoute } from '../contract/routes.ts';

/** The GraphQL request a tool call sends through Yoga: document text or a manifest id, and variables. */
export interface ToolRequest {
  query?: string;
  documentId?: string;
  operationName?: string;
  variables?: Record<string, unknown>;
}

/**
 * One MCP tool as the gateway offers it: what a model reads (name, description, schemas) and the
 * GraphQL request a call becomes. Tools never run anything themselves: Yoga runs every call.
 */
export interface ToolSpec {
  /** snake_case, as MCP clients show tools. */
  name: string;
  title: string;
  description: string;
  input: ZodRawShape;
  /** The shape of `structuredContent`: the GraphQL result's `data`. */
  output: ZodRawShape | z.ZodObject;
  /** Queries only: an assistant may call it without asking its user. */
  readOnly: boolean;
  /**
   * A write that changes or removes what exists (a route whose `changes.item` is set), not one that
   * only adds; and one whose repeat changes nothing more (an idempotent route). Unset: neither.
   */
  writes?: { destructive: boolean; idempotent: boolean };
  /** The request for these arguments, or the sentence refusing them (nothing is sent). */
  request(args: Record<string, unknown>): ToolRequest | { refused: string };
}

/** What writing through these routes does: destructive if any changes what exists, idempotent if all are. */
export function writesThrough(routes: readonly WriteRoute[]): NonNullable<ToolSpec['writes']> {
  return {
    destructive: routes.some((route) => route.changes.item),
    idempotent: routes.length > 0 && routes.every((route) => route.idempotent),
  };
}

/**
 * The specification's four hints, each said outright (clients differ in the defaults they assume).
 * A query only reads, so a repeat changes nothing. A write is destructive and idempotent as its
 * declared route says (`createPet` only adds a pet, and each call adds another: neither); a write
 * nothing declares is neither. Every tool reaches this one store and nothing beyond it: a closed world.
 */
export function annotationsOf(tool: ToolSpec): ToolAnnotations {
  if (tool.readOnly)
    return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  const { destructive = false, idempotent = false } = tool.writes ?? {};
  return {
    readOnlyHint: false,
    destructiveHint: destructive,
    idempotentHint: idempotent,
    openWorldHint: false,
  };
}
