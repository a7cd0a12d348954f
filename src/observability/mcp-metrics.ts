import { Counter, Histogram, type Registry } from 'prom-client';
import { createLabelBudget } from './labels.ts';

/** One MCP tool call as the metrics record it. */
export interface McpToolCall {
  /** The tool's name (a manifest's operations name their tools: bounded like operation names). */
  tool: string;
  /** `ok`, or `error` for a tool error (a GraphQL error, a refused argument, the rate limit). */
  outcome: 'ok' | 'error';
  /** The client's self-declared name from MCP `initialize`; bounded, other characters as `_` (`Claude_Desktop`). */
  client: string | undefined;
  seconds: number;
}

/** MCP tool calls and their durations, by tool, outcome and client name. */
export function mcpToolCallMetric(registry: Registry): (call: McpToolCall) => void {
  const tools = createLabelBudget(200);
  const clients = createLabelBudget(100);
  const calls = new Counter({
    name: 'pet_gateway_mcp_tool_calls_total',
    help: 'MCP tool calls (each one GraphQL request through Yoga), by tool, outcome and the client name from initialize.',
    labelNames: ['tool', 'outcome', 'client'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'pet_gateway_mcp_tool_call_duration_seconds',
    help: 'Time to answer one MCP tool call, its GraphQL request included, by tool.',
    labelNames: ['tool'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (call) => {
    const tool = tools(call.tool, 'unknown');
    calls.inc({
      tool,
      outcome: call.outcome,
      client: clients(call.client?.replace(/[^\w.-]/g, '_'), 'unknown'),
    });
    duration.observe({ tool }, call.seconds);
  };
}
