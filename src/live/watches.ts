import { type ListPetsQuery, listKey, type PetDto } from '../upstream/bodies.ts';
import type { CallerKey } from '../upstream/caller-key.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { UpstreamResponseError } from '../upstream/errors.ts';
import { Channel } from './channel.ts';

/** One event of a watch: what it watches, as asked for again, or an upstream failure. */
export type LiveEvent<T = PetDto[]> =
  | { readonly value: T }
  /** `final`: the upstream refused the key (401); the stream ends after this event. */
  | { readonly error: unknown; readonly final: boolean };

/**
 * What one watch asks for again, and how one answer is told from the next: a live list (`GET
 * /pets` with its arguments) or a live query (the operation run again).
 */
export interface Watched<T> {
  /** What is watched, for one caller: the subscribers of one caller and one key share one poll. */
  readonly key: string;
  /** What the subscription's log line says it watched. */
  readonly label: Readonly<Record<string, unknown>>;
  /** Asks again. A rejection is a failure event; polling goes on unless it was a 401. */
  poll(): Promise<T>;
  /**
   * The answer's text, which tells a change, and whether it ends the streams (`final`: the upstream
   * refused the key, told inside the answer, as a live query's errors tell it).
   */
  read(value: T): { readonly text: string; readonly final: boolean };
}

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
  /** What was watched (Watched.label). */
  label: Readonly<Record<string, unknown>>;
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

export interface WatchesOptions {
  upstream: UpstreamClient;
  callerKey: CallerKey;
  /** How often each watch is asked for again. */
  pollMs: number;
  /** Open subscriptions per API key on this instance. */
  maxPerKey: number;
  /** Open subscriptions on this instance. */
  maxStreams: number;
  /**
   * A subscriber that leaves a change unread this long (its client stopped reading, so the
   * transport stopped pulling) is ended, and its slot freed. It never holds more than one answer.
   */
  slowReaderMs: number;
  announcements?: CreateAnnouncements;
  onEnd?: (end: LiveEnd) => void;
}

export interface Watches {
  /**
   * Opens a subscription to `query`'s list for the caller whose canonical `Authorization` is
   * `auth`. Its first event is the list as it is now; then one event each time the list changes.
   * Throws LiveLimitError past a bound.
   */
  open(auth: string, query: ListPetsQuery, reader?: LiveReader): AsyncIterableIterator<LiveEvent>;
  /**
   * Opens a subscription to anything the caller may ask again (a live query), under the same
   * bounds as the lists: its first event is the latest answer, then one event per change.
   */
  watch<T>(auth: string, watched: Watched<T>, reader?: LiveReader): AsyncIterableIterator<LiveEvent<T>>;
  /**
   * A write of the caller changed what they watch (a create through this gateway): their watches,
   * lists and queries alike, are asked again now.
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
  readonly channel: Channel<LiveEvent<unknown>>;
  readonly reader: LiveReader | undefined;
  readonly opened: number;
  events: number;
  /** Whether it has had its first event. */
  started: boolean;
}

/** One watched (caller, key) pair: one poll for all its subscribers. */
interface Watch {
  readonly key: string;
  readonly caller: string;
  readonly watched: Watched<unknown>;
  readonly sinks: Set<Sink>;
  /** The last answer sent, as its text; undefined before the first answer. */
  last: string | undefined;
  latest: { readonly value: unknown } | undefined;
  timer: NodeJS.Timeout | undefined;
  polling: Promise<void> | undefined;
  /** A poll was asked for while one was in flight: one more runs after it. */
  again: boolean;
}

/**
 * Live `pets` lists and live queries over a REST service that has no events: the gateway asks
 * again (`GET /pets`, or the operation run again) every `pollMs` for each (caller, key) pair
 * somebody watches, once for all of that pair's subscribers, and sends a changed answer to each of
 * them, an unchanged one to none. A create through the gateway asks at once, on this instance and
 * (with `announcements`) on every instance sharing the Redis. Polls go through the upstream client
 * like any call (deadline, retries, breaker); a failure is an event and polling goes on; a 401
 * ends the pair's streams.
 */
export function createWatches(options: WatchesOptions): Watches {
  return new Hub(options);
}

/** The watches of one instance, by caller and key; a class so its parts have names. */
class Hub implements Watches {
  readonly stats: LiveStats = {
    open: 0,
    polls: 0,
    pollFailures: 0,
    changesSent: 0,
    refused: { per_key: 0, instance: 0 },
    slowReaders: 0,
  };
  readonly #options: WatchesOptions;
  readonly #watches = new Map<string, Watch>();
  readonly #perCaller = new Map<string, number>();
  /** Closed for the drain: a subscription asked for now is sent to another instance. */
  #closed = false;

  constructor(options: WatchesOptions) {
    this.#options = options;
    options.announcements?.listen((caller) => this.#pollCaller(caller));
  }

  open(auth: string, query: ListPetsQuery, reader?: LiveReader): AsyncIterableIterator<LiveEvent> {
    const { upstream } = this.#options;
    return this.watch<PetDto[]>(
      auth,
      {
        key: `list\u0000${listKey(query)}`,
        label: { subscription: 'pets', ...query },
        poll: () => upstream.listPets(auth, query),
        read: (pets) => ({ text: JSON.stringify(pets), final: false }),
      },
      reader,
    );
  }

  watch<T>(auth: string, watched: Watched<T>, reader?: LiveReader): AsyncIterableIterator<LiveEvent<T>> {
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
    const watch = this.#watchFor(caller, watched as Watched<unknown>);
    const sink: Sink = {
      channel: new Channel<LiveEvent<unknown>>(() => this.#leave(watch, sink, 'client')),
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
    if (watch.latest !== undefined) this.#send(sink, watch.latest);
    else void this.#poll(watch);
    return sink.channel as AsyncIterableIterator<LiveEvent<T>>;
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

  #watchFor(caller: string, watched: Watched<unknown>): Watch {
    const key = `${caller}\u0000${watched.key}`;
    const known = this.#watches.get(key);
    if (known) return known;
    const watch: Watch = {
      key,
      caller,
      watched,
      sinks: new Set(),
      last: undefined,
      latest: undefined,
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
      label: watch.watched.label,
      durationMs: Math.round(performance.now() - sink.opened),
      events: sink.events,
      reason,
    });
  }

  #send(sink: Sink, event: LiveEvent<unknown>): void {
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
    watch.polling = watch.watched
      .poll()
      .then(
        (value) => this.#answered(watch, value),
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

  #answered(watch: Watch, value: unknown): void {
    const { text, final } = watch.watched.read(value);
    const changed = text !== watch.last;
    watch.last = text;
    const event = { value };
    // A refusal is not kept: a subscriber arriving after it asks again.
    watch.latest = final ? undefined : event;
    const now = performance.now();
    for (const sink of [...watch.sinks]) {
      if (sink.channel.unreadFor(now) > this.#options.slowReaderMs) {
        this.#slow(watch, sink);
        continue;
      }
      if (!changed && sink.started && !final) continue;
      if (sink.started) this.stats.changesSent++;
      this.#send(sink, event);
      if (final) this.#unauthorized(watch, sink);
    }
  }

  /** The upstream refused the key: the stream ends after the event that told it. */
  #unauthorized(watch: Watch, sink: Sink): void {
    sink.channel.end();
    this.#leave(watch, sink, 'unauthorized');
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
      if (final) this.#unauthorized(watch, sink);
    }
  }
}
