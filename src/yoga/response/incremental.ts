import { isAsyncIterable, mergeIncrementalResult } from '@graphql-tools/utils';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** The media types that carry a result in parts: multipart/mixed (Apollo's clients) and SSE. */
const INCREMENTAL_MEDIA = /(^|,)\s*(multipart\/mixed|text\/event-stream)\s*(;|,|$)/i;

/**
 * `@defer` and `@stream`: Yoga's plugin executes them and answers in parts as multipart/mixed or
 * SSE, chosen by `Accept`. A client that accepts neither (an older app that sends `@defer`
 * without the header, or one behind a proxy that buffers) gets the whole result in one JSON
 * answer: the parts are merged here as they arrive, never refused.
 */
export function useIncrementalDelivery(): Plugin[] {
  return [
    useDeferStream(),
    {
      onExecutionResult({ request, result, setResult }) {
        if (!isAsyncIterable(result) || acceptsParts(request.headers.get('accept'))) return;
        return whole(result as AsyncIterable<ExecutionResult>).then(setResult);
      },
    },
  ];
}

/** Whether `Accept` names a media type that carries a result in parts (with a quality above 0). */
export function acceptsParts(accept: string | null): boolean {
  if (!accept) return false;
  return accept
    .split(',')
    .some((entry) => INCREMENTAL_MEDIA.test(entry) && !/;\s*q=0(\.0*)?\s*(;|$)/i.test(entry));
}

/** The parts of an incremental result merged into one result, as if nothing had been deferred. */
async function whole(parts: AsyncIterable<ExecutionResult>): Promise<ExecutionResult> {
  let merged: ExecutionResult | undefined;
  for await (const part of parts) {
    if (merged === undefined) merged = { ...part };
    else mergeIncrementalResult({ incrementalResult: part, executionResult: merged });
  }
  const { hasNext: _hasNext, ...result } = (merged ?? { data: null }) as ExecutionResult & {
    hasNext?: boolean;
  };
  return result;
}
