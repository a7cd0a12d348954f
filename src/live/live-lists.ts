import { type ListPetsQuery, listKey, type PetDto } from '../upstream/bodies.ts';
import type { CallerKey } from '../upstream/caller-key.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { UpstreamResponseError } from '../upstream/errors.ts';
import { Channel } from './channel.ts';

/** One event of a live list: the list as `pets` answers it, or an upstream failure. */
export type LiveEvent =
  | { readonly pets: PetDto[] }
  /** `final`: the upstream refused the key (401); the stream ends after this event. */
  | { readonly error: unknown; readonly final: boolean };

/** Why a subscription was refused: its key's bound, or the instance's. */
export class LiveLimitError extends Error {
  readonly bound: 'per_key' | 'instance';
  readonly limit: number;
  constructor(bound: 'per_key' | 'instance', limit: number) {
    super(`live subscriptions at the ${bound} bound of ${limit}`);
    this.name = 'LiveLimitError';
    this.bound = bound;
    this.limit = limit;
  }
}

/** Tells the other instances sharing a Redis that a caller created a pet, and hears theirs. */
export interface CreateAnnouncements {
  /** `caller` is the keyed HMAC of the caller's key (createCallerKey), never the key. */
  announce(caller: string): void;
  listen(onCreate: (caller: string) => void): void;
  close(): Promise<void>;
}

/** How one subscription ended, for its log line. */
export interface LiveEnd {
  caller: string;
  query: ListPetsQuery;
  durationMs: number;
  events: number;
  reason: 'client' | 'unauthorized' | 'shutdown' | 'slow_reader';
}

export interface LiveStats {
  open: number;
  polls: number;
  pollFailures: number;
  changesSent: number;
  refused: { per_key: number; instance: number };
  /** Subscriptions ended because their client left a change unread past `slowReaderMs`. */
  slowReaders: number;
}

export interface LiveListsOptions {
  upstream: UpstreamClient;
  callerKey: CallerKey;
  /** How often each watched list is asked for again. */
  pollMs: number;
  /** Open subscriptions per API key on this instance. */
  maxPerKey: number;
  /** Open subscriptions on this instance. */
  maxStreams: number;
  /**
   * A subscriber that leaves a change unread this long (its client stopped reading, so the
   * transport stopped pulling) is ended, and its slot freed. It never holds more than one list.
   */
  slowReaderMs: number;
  announcements?: CreateAnnouncements;
  onEnd?: (end: LiveEnd) => void;
}

export interface LiveLists {
  /**
   * Opens a subscription to `query`'s list for the caller whose canonical `Authorization` is
   * `auth`. Its first event is the list as it is now; then one event each time the list changes.
   * Throws LiveLimitError past a bound.
   */
  open(auth: string, query: ListPetsQuery, reader?: LiveReader): AsyncIterableIterator<LiveEvent>;
  /**
   * A write of the caller changed their lists (a create through this gateway): their lists are
   * asked for again now.
   */
  listsChanged(auth: string): void;
  /** Ends every subscription (the drain): each reader sees its stream complete. */
  close(): Promise<void>;
  readonly stats: LiveStats;
}

/** What the transport tells of the subscription's reader. */
export interface LiveReader {
  /** Aborted when the client is gone or done: the subscription ends at once, its slot freed. */
  signal?: AbortSignal;
  /** Called when the subscription is ended as a slow reader: the transport closes what it holds. */
  onSlow?: () => void;
}

interface Sink {
  readonly channel: Channel<LiveEvent>;
  readonly reader: LiveReader | undefined;
  readonly opened: number;
  events: number;
  /** Whether it has had its first event. */
  started: boolean;
}

/** One watched (caller, arguments) pair: one poll for all its subscribers. */
interface Watch {
  readonly key: string;
  readonly caller: string;
  readonly auth: string;
  readonly query: ListPetsQuery;
  readonly sinks: Set<Sink>;
  /** The last list sent, as JSON; undefined before the first answer. */
  last: string | undefined;
  pets: PetDto[] | undefined;
  timer: NodeJS.Timeout | undefined;
  polling: Promise<void> | undefined;
  /** A poll was asked for while one was in flight: one more runs after it. */
  again: boolean;
}

/**
 * Live `pets` lists over a REST service that has no events: the gateway asks `GET /pets` again
 * every `pollMs` for each (caller, arguments) pair somebody watches, once for all of that pair's
 * subscribers, and sends a changed answer to each of them, an unchanged one to none. A create
 * through the gateway asks at once, on this instance and (with `announcements`) on every instance
 * sharing the Redis. Polls go through the upstream client like any call (deadline, retries,
 * breaker); a failure is an event and polling goes on; a 401 ends the pair's streams.
 */
export function createLiveLists(options: LiveListsOptions): LiveLists {
  return new Hub(options);
}

/** The watches of one instance, by caller and arguments; a class so its parts have names. */
class Hub implements LiveLists {
  readonly stats: LiveStats = {
    open: 0,
    polls: 0,
    pollFailures: 0,
    changesSent: 0,
    refused: { per_key: 0, instance: 0 },
    slowReaders: 0,
  };
  readonly #options: LiveListsOptions;
  readonly #watches = new Map<string, Watch>();
  readonly #perCaller = new Map<string, number>();
  /** Closed for the drain: a subscription asked for now is sent to another instance. */
  #closed = false;

  constructor(options: LiveListsOptions) {
    this.#options = options;
    options.announcements?.listen((caller) => this.#pollCaller(caller));
  }

  open(auth: string, query: ListPetsQuery, reader?: LiveReader): AsyncIterableIterator<LiveEvent> {
    const { maxPerKey, maxStreams } = this.#options;
    const caller = this.#options.callerKey(auth);
    if ((this.#perCaller.get(caller) ?? 0) >= maxPerKey) {
      this.stats.refused.per_key++;
      throw new LiveLimitError('per_key', maxPerKey);
    }
    if (this.#closed || this.stats.open >= maxStreams) {
      this.stats.refused.instance++;
      throw new LiveLimitError('instance', maxStreams);
    }
    if (reader?.signal?.aborted) throw reader.signal.reason;
    const watch = this.#watchFor(auth, caller, query);
    const sink: Sink = {
      channel: new Channel<LiveEvent>(() => this.#leave(watch, sink, 'client')),
      reader,
      opened: performance.now(),
      events: 0,
      started: false,
    };
    // A reader waiting for the next change is not woken by its client leaving: the signal is.
    reader?.signal?.addEventListener('abort', () => void sink.channel.return(), { once: true });
    watch.sinks.add(sink);
    this.stats.open++;
    this.#perCaller.set(caller, (this.#perCaller.get(caller) ?? 0) + 1);
    if (watch.pets !== undefined) this.#send(sink, { pets: watch.pets });
    else void this.#poll(watch);
    return sink.channel;
  }

  listsChanged(auth: string): void {
    // Nothing watched here and nobody else to tell: not even the caller's HMAC is worth computing.
    if (this.#watches.size === 0 && !this.#options.announcements) return;
    const caller = this.#options.callerKey(auth);
    this.#pollCaller(caller);
    this.#options.announcements?.announce(caller);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const watch of [...this.#watches.values()]) {
      for (const sink of [...watch.sinks]) {
        sink.channel.end();
        this.#leave(watch, sink, 'shutdown');
      }
    }
    await this.#options.announcements?.close();
  }

  #pollCaller(caller: string): void {
    for (const watch of this.#watches.values()) if (watch.caller === caller) void this.#poll(watch);
  }

  #watchFor(auth: string, caller: string, query: ListPetsQuery): Watch {
    const key = `${caller}\u0000${listKey(query)}`;
    const known = this.#watches.get(key);
    if (known) return known;
    const watch: Watch = {
      key,
      caller,
      auth,
      query,
      sinks: new Set(),
      last: undefined,
      pets: undefined,
      timer: undefined,
      polling: undefined,
      again: false,
    };
    this.#watches.set(key, watch);
    watch.timer = setInterval(() => void this.#poll(watch), this.#options.pollMs);
    return watch;
  }

  #leave(watch: Watch, sink: Sink, reason: LiveEnd['reason']): void {
    if (!watch.sinks.delete(sink)) return;
    this.stats.open--;
    const count = (this.#perCaller.get(watch.caller) ?? 1) - 1;
    if (count === 0) this.#perCaller.delete(watch.caller);
    else this.#perCaller.set(watch.caller, count);
    if (watch.sinks.size === 0) {
      clearInterval(watch.timer);
      this.#watches.delete(watch.key);
    }
    this.#options.onEnd?.({
      caller: watch.caller,
      query: watch.query,
      durationMs: Math.round(performance.now() - sink.opened),
      events: sink.events,
      reason,
    });
  }

  #send(sink: Sink, event: LiveEvent): void {
    sink.events++;
    sink.started = true;
    sink.channel.push(event);
  }

  /** One poll of the pair, or, while one is in flight, one more right after it. */
  #poll(watch: Watch): Promise<void> {
    if (watch.polling) {
      watch.again = true;
      return watch.polling;
    }
    this.stats.polls++;
    watch.polling = this.#options.upstream
      .listPets(watch.auth, watch.query)
      .then(
        (pets) => this.#answered(watch, pets),
        (error: unknown) => this.#failed(watch, error),
      )
      .finally(() => {
        watch.polling = undefined;
        if (watch.again && this.#watches.get(watch.key) === watch) {
          watch.again = false;
          void this.#poll(watch);
        }
      });
    return watch.polling;
  }

  #answered(watch: Watch, pets: PetDto[]): void {
    const text = JSON.stringify(pets);
    const changed = text !== watch.last;
    watch.last = text;
    watch.pets = pets;
    const now = performance.now();
    for (const sink of [...watch.sinks]) {
      if (sink.channel.unreadFor(now) > this.#options.slowReaderMs) {
        this.#slow(watch, sink);
        continue;
      }
      if (!changed && sink.started) continue;
      if (sink.started) this.stats.changesSent++;
      this.#send(sink, { pets });
    }
  }

  /** Its client has stopped reading: the subscription ends and the transport lets go of it. */
  #slow(watch: Watch, sink: Sink): void {
    this.stats.slowReaders++;
    sink.channel.end();
    this.#leave(watch, sink, 'slow_reader');
    sink.reader?.onSlow?.();
  }

  #failed(watch: Watch, error: unknown): void {
    this.stats.pollFailures++;
    const final = error instanceof UpstreamResponseError && error.status === 401;
    for (const sink of [...watch.sinks]) {
      this.#send(sink, { error, final });
      if (final) {
        sink.channel.end();
        this.#leave(watch, sink, 'unauthorized');
      }
    }
  }
}
