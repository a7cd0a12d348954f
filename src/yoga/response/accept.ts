import { isAsyncIterable } from '@graphql-tools/utils';
import { type Plugin, processRegularResult } from 'graphql-yoga';
import { notAcceptable } from '../../schema/errors.ts';

type ResultProcessor = NonNullable<Parameters<NonNullable<Plugin['onResultProcess']>>[0]['resultProcessor']>;

/** The media types Yoga's result processors answer in: a request must accept one of them. */
const FORMS = [
  'text/event-stream',
  'multipart/mixed',
  'application/graphql-response+json',
  'application/json',
];

/**
 * The media types of an `Accept` header as Yoga's result processors read it (graphql-yoga's
 * `result-processor/accept.js`): no header is `*\/*`, parameters are dropped, and an entry whose
 * charset is not UTF-8 is left out.
 */
export function acceptedMediaTypes(accept: string | null): string[] {
  const types: string[] = [];
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset === 'charset=utf-8') types.push(type);
  }
  return types;
}

/** Whether an asked-for media type (wildcards allowed) covers `form`, as Yoga matches them. */
function covers(asked: string, form: string): boolean {
  const [askedType, askedSubtype] = asked.split('/');
  const [type, subtype] = form.split('/');
  return (askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype);
}

/**
 * A request whose `Accept` admits none of the forms the endpoint answers in is refused before
 * anything runs: Yoga would run it (a mutation included) and then answer 406 with no body, leaving
 * the client to guess. Any other 406 Yoga would send without a body (a result no accepted form
 * can carry) gets one too: the result's own errors, or NOT_ACCEPTABLE. Both keep Yoga's `accept`
 * header, which lists the forms it answers in.
 */
export function useAcceptableForms(): Plugin {
  return {
    onRequestParse({ request }) {
      const asked = acceptedMediaTypes(request.headers.get('accept'));
      if (!asked.some((type) => FORMS.some((form) => covers(type, form)))) throw notAcceptable();
    },
    onResultProcess({ resultProcessor, acceptableMediaTypes, setResultProcessor }) {
      if (resultProcessor) return;
      // As Yoga's own 406 lists them; Yoga lists none when no entry of Accept was UTF-8.
      const forms = acceptableMediaTypes.length > 0 ? acceptableMediaTypes : FORMS;
      setResultProcessor(refusal(forms.join('; charset=utf-8, ')), 'application/json');
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
