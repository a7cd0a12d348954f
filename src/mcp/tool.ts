import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ZodRawShape, z } from 'zod';

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
  /** The request for these arguments, or the sentence refusing them (nothing is sent). */
  request(args: Record<string, unknown>): ToolRequest | { refused: string };
}

/**
 * The specification's four hints, each said outright (clients differ in the defaults they assume),
 * from the operation type as Apollo's MCP server sets them. A query only reads, so a repeat changes
 * nothing. The public schema's one mutation, createPet, adds a pet and never changes or removes one
 * (not destructive), and each call adds another (not idempotent: a client asks before it). Every tool
 * reaches this one store and nothing beyond it: a closed world.
 */
export function annotationsOf(tool: ToolSpec): ToolAnnotations {
  return tool.readOnly
    ? { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
    : { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
}
