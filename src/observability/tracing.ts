import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
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
import type { DocumentNode, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { methodOf, type UpstreamObserver } from '../upstream/client.ts';

export interface Tracing {
  /** A span per GraphQL operation, child of the caller's `traceparent` when it sent one. */
  plugin: Plugin;
  /** A span per upstream attempt, child of the operation's, with `traceparent` sent upstream. */
  upstream: UpstreamObserver;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTLP/HTTP traces endpoint base (OTEL_EXPORTER_OTLP_ENDPOINT), or an exporter (tests). */
  exporter: SpanExporter | string;
}

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};
let contextManagerInstalled = false;

/**
 * OpenTelemetry tracing, off unless configured. Spans carry operation names and route templates
 * only: never variables, ids, headers or tokens.
 */
export function createTracing(options: TracingOptions): Tracing {
  if (!contextManagerInstalled) {
    // Spans follow the async path of a request (resolvers, DataLoader batches, undici calls).
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerInstalled = true;
  }
  const exporter =
    typeof options.exporter === 'string'
      ? new OTLPTraceExporter({ url: `${options.exporter.replace(/\/+$/, '')}/v1/traces` })
      : options.exporter;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'pet-gateway' }),
    // Batches for a real collector; spans one by one for an in-process exporter (tests).
    spanProcessors: [
      typeof options.exporter === 'string'
        ? new BatchSpanProcessor({ exporter })
        : new SimpleSpanProcessor({ exporter }),
    ],
  });
  const tracer = provider.getTracer('pet-gateway');
  const operationSpans = new WeakMap<object, Span>();

  const plugin: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const request = (args.contextValue as { request?: Request }).request;
      const parent = request
        ? propagator.extract(context.active(), request.headers, headerGetter)
        : context.active();
      const operation = (args.document as DocumentNode).definitions.find(
        (definition) => definition.kind === 'OperationDefinition',
      );
      const type = operation?.kind === 'OperationDefinition' ? operation.operation : 'query';
      const name =
        operation?.kind === 'OperationDefinition' ? (operation.name?.value ?? 'anonymous') : 'anonymous';
      const span = tracer.startSpan(
        `graphql.${type} ${name.slice(0, 64)}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'graphql.operation.type': type, 'graphql.operation.name': name.slice(0, 64) },
        },
        parent,
      );
      operationSpans.set(args.contextValue as object, span);
      const active = trace.setSpan(parent, span);
      setExecuteFn((executeArgs) => context.with(active, () => executeFn(executeArgs)));
      return {
        onExecuteDone({ result }) {
          const errors = (result as ExecutionResult).errors;
          if (errors?.length) {
            span.setStatus({ code: SpanStatusCode.ERROR });
            span.setAttribute('graphql.error.codes', [
              ...new Set(errors.map((e) => String(e.extensions?.code ?? 'INTERNAL_SERVER_ERROR'))),
            ]);
          }
          span.end();
        },
      };
    },
  };

  const upstream: UpstreamObserver = {
    attempt(route, headers) {
      const span = tracer.startSpan(route, {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': methodOf(route),
          'http.route': route.slice(route.indexOf(' ') + 1),
        },
      });
      propagator.inject(trace.setSpan(context.active(), span), headers, {
        set: (carrier, key, value) => {
          carrier[key] = value;
        },
      });
      return (end) => {
        if (end.status !== undefined) span.setAttribute('http.response.status_code', end.status);
        span.setAttribute('pet_gateway.outcome', end.outcome);
        if (end.outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
    },
  };

  return { plugin, upstream, shutdown: () => provider.shutdown() };
}
