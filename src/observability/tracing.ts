import {
  context,
  defaultTextMapSetter,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { CODES } from '../codes.ts';
import type { UpstreamObserver } from '../upstream/observer.ts';
import { MAX_OPERATION_NAME } from './labels.ts';

export interface Tracing {
  /** A span per GraphQL operation, child of the caller's `traceparent` when it sent one. */
  plugin: Plugin;
  /**
   * Opens an operation's span (what the plugin does for Yoga's lane; the fast lane calls it
   * directly). `header` reads the caller's request headers (for `traceparent`).
   */
  startOperation(
    header: (name: string) => string | undefined,
    type: string,
    name: string | undefined,
  ): OperationSpan;
  /** A span per upstream attempt, child of the operation's, with `traceparent` sent upstream. */
  upstream: UpstreamObserver;
  /**
   * Opens an MCP tool call's span, child of the caller's `traceparent` when it sent one. The call's
   * GraphQL request carries `headers()`, so its operation's span is the tool call's child.
   */
  startToolCall(header: (name: string) => string | undefined, tool: string): ToolCallSpan;
  /**
   * Runs `work` in the caller's trace (its `traceparent`), with no span of its own: upstream calls
   * made for the request outside any operation (`/mcp` checking a key) stay in the caller's trace.
   */
  inCallerTrace<T>(header: (name: string) => string | undefined, work: () => T): T;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

/** An operation's span: upstream calls made inside `run` become its children. */
export interface OperationSpan {
  run<T>(work: () => T): T;
  /** Ends the span, marked as failed with the errors' codes when there are any. */
  end(errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }>): void;
}

/** An MCP tool call's span. */
export interface ToolCallSpan {
  /** The W3C trace context headers that make a request's spans this call's children. */
  headers(): Record<string, string>;
  /** Ends the span, marked as failed with the codes the tool result carried when it failed. */
  end(failure?: { codes?: readonly string[] }): void;
}

export interface TracingOptions {
  /** OTLP/HTTP traces endpoint base (OTEL_EXPORTER_OTLP_ENDPOINT), or an exporter (tests). */
  exporter: SpanExporter | string;
}

const propagator = new W3CTraceContextPropagator();
/** Extraction reads only the headers the W3C format names, through the lane's own reader. */
const headerGetter = {
  keys: () => ['traceparent', 'tracestate'],
  get: (carrier: (name: string) => string | undefined, key: string) => carrier(key),
};
let contextManagerInstalled = false;

/**
 * OpenTelemetry tracing, off unless configured. Spans carry operation names and route templates
 * only: never variables, ids, headers or tokens.
 */
export function createTracing(options: TracingOptions): Tracing {
  installContextManager();
  const provider = openProvider(options.exporter);
  const tracer = provider.getTracer('pet-gateway');
  const startOperation = operationSpans(tracer);
  return {
    plugin: operationPlugin(startOperation),
    startOperation,
    upstream: upstreamSpans(tracer),
    startToolCall: toolCallSpans(tracer),
    inCallerTrace: (header, work) =>
      context.with(propagator.extract(context.active(), header, headerGetter), work),
    shutdown: () => provider.shutdown(),
  };
}

function installContextManager(): void {
  if (contextManagerInstalled) return;
  // Spans follow the async path of a request (resolvers, DataLoader batches, undici calls).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerInstalled = true;
}

/** The provider, exporting to an OTLP/HTTP endpoint (a base URL) or to the exporter given. */
function openProvider(target: TracingOptions['exporter']): TracerProvider {
  const exporter =
    typeof target === 'string'
      ? new OTLPTraceExporter({ url: `${target.replace(/\/+$/, '')}/v1/traces` })
      : target;
  return new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'pet-gateway' }),
    // Batches for a real collector; spans one by one for an in-process exporter (tests).
    spanProcessors: [
      typeof target === 'string'
        ? new BatchSpanProcessor({ exporter })
        : new SimpleSpanProcessor({ exporter }),
    ],
  });
}

/** A SERVER span, the child of the caller's `traceparent` when it sent one, and the context it is active in. */
function openServerSpan(
  tracer: Tracer,
  header: (name: string) => string | undefined,
  name: string,
  attributes: Record<string, string>,
) {
  const parent = propagator.extract(context.active(), header, headerGetter);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, active: trace.setSpan(parent, span) };
}

/** Ends a span; a failed one is marked so, with its codes (each once) under `attribute`. */
function endSpan(span: Span, failed: boolean, attribute: string, codes: readonly string[]): void {
  if (failed) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    if (codes.length > 0) span.setAttribute(attribute, [...new Set(codes)]);
  }
  span.end();
}

/** Opens operation spans, each the child of the caller's `traceparent` when it sent one. */
function operationSpans(tracer: Tracer): Tracing['startOperation'] {
  return (header, type, operationName) => {
    const name = (operationName ?? 'anonymous').slice(0, MAX_OPERATION_NAME);
    const { span, active } = openServerSpan(tracer, header, `graphql.${type} ${name}`, {
      'graphql.operation.type': type,
      'graphql.operation.name': name,
    });
    return {
      run: (work) => context.with(active, work),
      end: (errors) =>
        endSpan(
          span,
          (errors?.length ?? 0) > 0,
          'graphql.error.codes',
          (errors ?? []).map((e) => String(e.extensions?.code ?? CODES.INTERNAL_SERVER_ERROR.code)),
        ),
    };
  };
}

/** Opens tool call spans (src/mcp/): the tool's name only, never its arguments. */
function toolCallSpans(tracer: Tracer): Tracing['startToolCall'] {
  return (header, tool) => {
    const name = tool.slice(0, MAX_OPERATION_NAME);
    const { span, active } = openServerSpan(tracer, header, `mcp.tools/call ${name}`, {
      'mcp.tool.name': name,
    });
    return {
      headers() {
        const carrier: Record<string, string> = {};
        propagator.inject(active, carrier, defaultTextMapSetter);
        return carrier;
      },
      end: (failure) => endSpan(span, failure !== undefined, 'mcp.error.codes', failure?.codes ?? []),
    };
  };
}

/** Yoga's lane: a span around each operation it executes, or the end of the one the fast lane opened. */
function operationPlugin(startOperation: Tracing['startOperation']): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const { request, operationSpan } = args.contextValue as {
        request?: Request;
        operationSpan?: OperationSpan;
      };
      // The fast lane opened this operation's span and executed it; Yoga only answers it.
      if (operationSpan) {
        return { onExecuteDone: ({ result }) => operationSpan.end((result as ExecutionResult).errors) };
      }
      // The operation that runs, as the fast lane names it (not the document's first one).
      const operation = getOperationAST(args.document as DocumentNode, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = operation?.name?.value;
      const span = startOperation((header) => request?.headers.get(header) ?? undefined, type, name);
      setExecuteFn((executeArgs) => span.run(() => executeFn(executeArgs)));
      return {
        onExecuteDone({ result }) {
          span.end((result as ExecutionResult).errors);
        },
      };
    },
  };
}

/** A client span per upstream attempt, its context sent upstream as `traceparent`. */
function upstreamSpans(tracer: Tracer): UpstreamObserver {
  return {
    attempt(route, headers) {
      const span = tracer.startSpan(route.name, {
        kind: SpanKind.CLIENT,
        attributes: { 'http.request.method': route.method, 'http.route': route.path },
      });
      propagator.inject(trace.setSpan(context.active(), span), headers, {
        set: (carrier, key, value) => {
          carrier[key] = value;
        },
      });
      return (end) => {
        if (end.status !== undefined) span.setAttribute('http.response.status_code', end.status);
        span.setAttribute('pet_gateway.outcome', end.outcome);
        // A call given up because its client left is no error of the exchange.
        if (end.outcome !== 'ok' && end.outcome !== 'cancelled')
          span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
    },
  };
}
