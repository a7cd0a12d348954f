import type { ServerResponse } from 'node:http';

/** What a client's leaving cancels: one request's upstream calls (its loaders). */
export interface Abandonable {
  abandon(): void;
}

const WORK = Symbol('cancelled when the client goes');

type Watched = ServerResponse & { [WORK]?: Abandonable | Abandonable[] };

/**
 * Cancels `work` when the response's client goes away before it is answered in full (its socket
 * closed: node:http then closes the response unfinished), or at once when it already has. Both
 * lanes call it, the fast lane on every request it executes: so one 'close' listener per response,
 * a function shared by every response, and no AbortController, closure or timer per request. The
 * work rides on the response itself; the few requests that hold more than one set of loaders (an
 * ordered batch) keep them in a list.
 */
export function cancelWhenClientGoes(res: ServerResponse, work: Abandonable): void {
  if (res.destroyed) {
    if (!res.writableFinished) work.abandon();
    return;
  }
  const watched = res as Watched;
  const held = watched[WORK];
  if (held === undefined) {
    watched[WORK] = work;
    res.on('close', closed);
  } else if (Array.isArray(held)) {
    if (!held.includes(work)) held.push(work);
  } else if (held !== work) watched[WORK] = [held, work];
}

function closed(this: Watched): void {
  // A response answered in full closes too: nothing is left to cancel.
  if (this.writableFinished) return;
  const held = this[WORK];
  if (Array.isArray(held)) for (const work of held) work.abandon();
  else held?.abandon();
}
