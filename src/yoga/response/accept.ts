import { isAsyncIterable } from '@graphql-tools/utils';
import { getSSEProcessor, type Plugin, processRegularResult } from 'graphql-yoga';
import { notAcceptable } from '../../schema/errors.ts';
import { liveOperation } from '../../schema/live.ts';

type ResultProcessor = NonNullable<Parameters<NonNullable<Plugin['onResultProcess']>>[0]['resultProcessor']>;

const SSE = 'text/event-stream';
const MULTIPART = 'multipart/mixed';
const REGULAR = ['application/graphql-response+json', 'application/json'];

/** The media types Yoga's result processors answer in: a request must accept one of them. */
const FORMS = [SSE, MULTIPART, ...REGULAR];

/** A quality of 0 (RFC 9110 §12.4.2): "not acceptable". */
const ZERO_QUALITY = /^q=0(\.0{0,3})?$/;

interface AcceptEntry {
  readonly type: string;
  /** Its quality is 0: the client refuses this form. */
  readonly refused: boolean;
}

/**
 * The entries of an `Accept` header as Yoga's result processors read them (graphql-yoga's
 * `result-processor/accept.js`): no header is `*\/*`, parameters are dropped, and an entry whose
 * charset is not UTF-8 is left out. Yoga reads no quality; `refused` marks a quality of 0.
 */
function readAccept(accept: string | null): AcceptEntry[] {
  const entries: AcceptEntry[] = [];
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    entries.push({ type, refused: params.some((param) => ZERO_QUALITY.test(param)) });
  }
  return entries;
}

/** The media types an `Accept` header admits: Yoga's reading of it, less those refused with q=0. */
export function acceptedMediaTypes(accept: string | null): string[] {
  return readAccept(accept).flatMap((entry) => (entry.refused ? [] : [entry.type]));
}

/** Whether an asked-for media type (wildcards allowed) covers `form`, as Yoga matches them. */
export function covers(asked: string, form: string): boolean {
  const [askedType, askedSubtype] = asked.split('/');
  const [type, subtype] = form.split('/');
  return (askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype);
}

/**
 * The form Yoga's result processors pick for `types`: of SSE, multipart (not for a subscription)
 * and JSON (not for a result in parts), the last that one of them covers, and of JSON's two
 * media types the one covered last, `types` read from the end.
 */
function chooseForm(types: readonly string[], parts: boolean, subscription: boolean): string | undefined {
  const processors = [[SSE], subscription ? [] : [MULTIPART], parts ? [] : REGULAR];
  let chosen: string | undefined;
  for (const forms of processors) {
    for (const asked of types.toReversed()) {
      for (const form of forms) if (covers(asked, form)) chosen = form;
    }
  }
  return chosen;
}

/**
 * The form an answer takes, read off `Accept` as Yoga reads it, except that a media type the
 * client gives a quality of 0 is never chosen: another form it admits answers, or none does.
 * A request whose `Accept` admits none of the forms the endpoint answers in is refused before
 * anything runs: Yoga would run it (a mutation included) and then answer 406 with no body, leaving
 * the client to guess. Any other 406 Yoga would send without a body (a result no admitted form
 * can carry) gets one too: the result's own errors, or NOT_ACCEPTABLE. Both keep Yoga's `accept`
 * header, which lists the forms it answers in.
 */
export function useAcceptableForms(): Plugin {
  const subscriptions = new WeakSet<Request>();
  const liveQueries = new WeakSet<Request>();
  const sse = getSSEProcessor();
  return {
    onRequestParse({ request }) {
      const asked = acceptedMediaTypes(request.headers.get('accept'));
      if (!asked.some((type) => FORMS.some((form) => covers(type, form)))) throw notAcceptable();
    },
    onSubscribe({ args }) {
      const { request } = args.contextValue as { request?: Request };
      if (request) subscriptions.add(request);
    },
    // A live query's results are events, as a subscription's are; Yoga, which sees a query, would
    // answer them as parts of one result when Accept lists multipart/mixed.
    onExecute({ args }) {
      const { request } = args.contextValue as { request?: Request };
      if (request && liveOperation(args)) {
        subscriptions.add(request);
        liveQueries.add(request);
      }
    },
    // After Yoga's own hook, which has picked a processor or found none.
    onResultProcess({ request, result, resultProcessor, acceptableMediaTypes, setResultProcessor }) {
      // As Yoga's own 406 lists them; Yoga lists none when no entry of Accept was UTF-8.
      const refuse = () =>
        setResultProcessor(
          refusal((acceptableMediaTypes.length > 0 ? acceptableMediaTypes : FORMS).join('; charset=utf-8, ')),
          'application/json',
        );
      if (!resultProcessor) return refuse();
      const entries = readAccept(request.headers.get('accept'));
      const parts = isAsyncIterable(result);
      const subscription = subscriptions.has(request);
      const admitted = entries.flatMap((entry) => (entry.refused ? [] : [entry.type]));
      const form = chooseForm(admitted, parts, subscription);
      if (form === SSE && !parts && !Array.isArray(result) && result.errors?.length) {
        return setResultProcessor(withErrorStatus(sse), form);
      }
      if (form === SSE && parts && liveQueries.has(request)) return setResultProcessor(sse, form);
      // Yoga read the same entries: its choice stands.
      if (!entries.some((entry) => entry.refused)) return;
      const yogas = chooseForm(
        entries.map((entry) => entry.type),
        parts,
        subscription,
      );
      if (form === yogas) return;
      if (form === undefined) refuse();
      else if (form === SSE) setResultProcessor(sse, form);
      // A client refusing JSON with q=0 but admitting multipart/mixed, for a result not in parts.
      else if (form === MULTIPART) setResultProcessor(inOnePart, form);
      else setResultProcessor(processRegularResult, form);
    },
  };
}

/** Answers 406 in JSON, which RFC 9110 allows whatever `Accept` says; ends a stream nobody can read. */
function refusal(forms: string): ResultProcessor {
  return (result, fetchAPI) => {
    let answered = result;
    if (isAsyncIterable(result)) {
      // Its end may fail (an upstream call in flight); nobody is left to tell.
      Promise.resolve(result[Symbol.asyncIterator]().return?.()).catch(() => {});
      answered = { errors: [notAcceptable()] };
    } else if (!Array.isArray(result) && !result.errors?.length) {
      answered = { errors: [notAcceptable()] };
    }
    const response = processRegularResult(answered, fetchAPI, 'application/json');
    response.headers.set('accept', forms);
    return response;
  };
}

/**
 * Yoga's SSE writer, answering a result that failed before it could stream (a document that does
 * not validate, variables that do not coerce) with the status the error carries, as multipart and
 * `application/graphql-response+json` answer it: Yoga's writer says 200 for those. Only the
 * legacy `application/json` form keeps 200, as GraphQL over HTTP asks. The events are the ones
 * Yoga writes for one result.
 */
function withErrorStatus(sse: ResultProcessor): ResultProcessor {
  return (result, fetchAPI, type) => {
    if (Array.isArray(result) || isAsyncIterable(result)) return sse(result, fetchAPI, type);
    const json = processRegularResult(result, fetchAPI, 'application/graphql-response+json');
    if (json.status === 200) return sse(result, fetchAPI, type);
    return json.text().then(
      (text) =>
        new fetchAPI.Response(`:\n\nevent: next\ndata: ${text}\n\nevent: complete\ndata:\n\n`, {
          status: json.status,
          headers: { 'content-type': 'text/event-stream', connection: 'keep-alive' },
        }),
    );
  };
}

/**
 * One result as a multipart/mixed answer of one part, byte for byte as Yoga's multipart writer
 * (which it does not export) writes a result, with the status GraphQL over HTTP gives it.
 */
const inOnePart: ResultProcessor = async (result, fetchAPI) => {
  const json = processRegularResult(result, fetchAPI, 'application/graphql-response+json');
  const body = await json.text();
  const part = `\r\n---\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}\r\n-----\r\n`;
  return new fetchAPI.Response(part, {
    status: json.status,
    headers: { 'content-type': 'multipart/mixed; boundary="-"' },
  });
};
