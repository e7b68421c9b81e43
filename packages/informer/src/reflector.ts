import { BackoffManager, realClock, sleep, type BackoffManagerOptions, type Clock } from '@loopwright/core';
import { KubeApiError, KubeApiFailure, type KubeObject } from '@loopwright/client';
import { FailureReason, failureReason } from './failure-reason.ts';
import type { ResourceClient } from './list-watch.ts';
import { missingResourceMessage, shouldLogMissingResource } from './missing-resource.ts';
import {
  InitialEvents,
  isInitialEventsEnd,
  isStreamingListRefusal,
  StreamingListRefusedError,
  type InitialSync,
} from './streaming-list.ts';
import { consoleLogger, type InformerMetrics, type Logger } from './types.ts';

/** A change to apply to the cache, from a watch event. */
export interface ObjectEvent<T extends KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: T;
}

/** Where a reflector delivers what it learns. The informer implements this. */
export interface ReflectorSink<T extends KubeObject> {
  /** A complete list: the cache must become exactly `items` (the sink computes the diff). */
  replace(items: T[], resourceVersion: string): void;
  /** One watch event, in server order. */
  apply(event: ObjectEvent<T>): void;
}

/** The reflector's backoff between failed attempts; unset fields keep client-go's reflector values. */
export type ReflectorBackoffOptions = Partial<Omit<BackoffManagerOptions, 'clock'>>;

/**
 * client-go's reflector backoff: 800 ms doubling to 30 s, jittered up to 100%, starting over after 2 min
 * without a failure (`NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)`).
 */
export const REFLECTOR_BACKOFF = {
  durationMs: 800,
  factor: 2,
  steps: Infinity,
  capMs: 30_000,
  jitter: 1,
  resetAfterMs: 120_000,
} as const;

/** Options of {@link Reflector}. */
export interface ReflectorOptions<T extends KubeObject> {
  client: ResourceClient<T>;
  sink: ReflectorSink<T>;
  clock?: Clock;
  /** Backoff between failed attempts; defaults are client-go's (800 ms, x2, cap 30 s, jitter 1.0, reset 2 min). */
  backoff?: ReflectorBackoffOptions;
  /**
   * Server-side watch timeout is `min * (1 + random())` seconds, like client-go (default min 300 s, so
   * 5-10 min): the random spread keeps many informers from re-watching at the same moment.
   */
  minWatchTimeoutSeconds?: number;
  /**
   * Client-side inactivity timeout of a watch. The API server sends a bookmark about every minute on
   * a quiet watch, so silence well beyond that means a dead (half-open) connection. Default 90 s.
   */
  inactivityTimeoutMs?: number;
  logger?: Logger;
  metrics?: InformerMetrics;
  /**
   * Called with every failure, after the metric and the log line: a {@link KubeApiError} for anything
   * the API server (or the connection to it) did, any other error for a bug. Must not throw (it is
   * isolated anyway).
   */
  onError?: (error: Error) => void;
  /** Randomness for the watch timeout; injectable for tests. */
  random?: () => number;
  /**
   * How the cache is filled at start and after 410 Gone (see {@link InitialSync}). Default
   * `watch-list`; a server that does not do streaming lists gets a list instead, from then on.
   */
  initialSync?: InitialSync;
}

/** A watch that ends by itself sooner than this without delivering anything counts as a failure. */
const SHORT_WATCH_MS = 1000;

/** A caller of {@link Reflector.rescope} waiting for the list of its scope (or a later one). */
interface RescopeWaiter {
  generation: number;
  resolve: () => void;
}

/** A failed attempt: what went wrong, and how it is labelled and handled. */
interface Failure {
  error: Error;
  reason: FailureReason;
}

/**
 * Keeps a sink in sync with the API server: list, then watch from the list's resourceVersion,
 * forever, until the signal aborts. The list is a streaming list by default (`initialSync`): a watch
 * whose initial events fill a temporary store, which replaces the sink's content at the bookmark that
 * ends them, once, as a list's items do; the same watch then goes on.
 *
 * Failure behaviour (the loop never exits on its own):
 * - the server ends a watch (its `timeoutSeconds`): re-watch at once from the last resourceVersion;
 * - 410 Gone (HTTP status or an ERROR event with code 410 / reason Expired): back off, then relist;
 *   the relist replaces the sink's content (deletes for objects that vanished meanwhile);
 * - 404 NotFound: the resource is not served (its CRD is not installed, or was deleted): back off,
 *   then list again, until it is served (a relist, counted once, if a list had succeeded); logged once
 *   (and again every 10 min while it lasts), and {@link Reflector.resourceMissing} is true meanwhile;
 * - anything else (network errors, 5xx, 429, 401/403, timeouts, inactivity, a watch closed at once
 *   without events, undecodable data, failed lists): back off (jittered exponential), then resume
 *   with a watch from the last resourceVersion, or retry the list if none has succeeded yet;
 *   `Retry-After` from a 429 is honoured as a lower bound on the wait;
 * - a streaming list refused by the server (422 Invalid: its WatchList feature is off or it is older
 *   than 1.27), or one that shows the server ignores it (a plain bookmark before the end of its initial
 *   events): list at once, and from then on (one debug line, no failure reported);
 * - a streaming list cut short (network, a server that ends it before its bookmark...): a failure
 *   like any other, backed off and retried as a streaming list;
 * - every failure is reported to `metrics.watchError`, the logger (except repeated 404s) and `onError`;
 * - abort: in-flight requests are cancelled, nothing is reported, the sink receives nothing more.
 *
 * Server-side sharding (KEP-5866): {@link Reflector.rescope} narrows or widens what it lists and
 * watches to a `shardSelector`'s objects, by a list that replaces the sink's content.
 */
export class Reflector<T extends KubeObject> {
  readonly #client: ResourceClient<T>;
  readonly #sink: ReflectorSink<T>;
  readonly #clock: Clock;
  readonly #backoff: BackoffManager;
  readonly #minWatchTimeoutSeconds: number;
  readonly #inactivityTimeoutMs: number;
  readonly #logger: Logger;
  readonly #metrics: InformerMetrics;
  readonly #onError: ((error: Error) => void) | undefined;
  readonly #random: () => number;
  #initialSync: InitialSync;
  /** No list has succeeded yet, or the last one is no longer a valid start (410 Gone, 404). */
  #listDue = true;
  #resourceVersion: string | undefined;
  #resourceMissing = false;
  #missingResourceLoggedAt: number | undefined;
  /** Re-scoped at least once: lists and watches carry `#shardSelector`, or select nothing without one. */
  #sharded = false;
  #shardSelector: string | undefined;
  /** Counts re-scopes; `#listedGeneration` is the one whose scope the last list had. */
  #generation = 0;
  #listedGeneration = 0;
  /** The scope the current attempt lists and watches, set when it begins. */
  #attemptGeneration = 0;
  /** Aborted by a re-scope: ends the current list, watch or backoff so the next attempt lists anew. */
  #attempt: AbortController | undefined;
  #rescopeWaiters: RescopeWaiter[] = [];

  constructor(options: ReflectorOptions<T>) {
    this.#client = options.client;
    this.#sink = options.sink;
    this.#clock = options.clock ?? realClock;
    this.#backoff = new BackoffManager({ ...REFLECTOR_BACKOFF, ...options.backoff, clock: this.#clock });
    this.#minWatchTimeoutSeconds = options.minWatchTimeoutSeconds ?? 300;
    this.#inactivityTimeoutMs = options.inactivityTimeoutMs ?? 90_000;
    this.#logger = options.logger ?? consoleLogger;
    this.#metrics = options.metrics ?? {};
    this.#onError = options.onError;
    this.#random = options.random ?? Math.random;
    this.#initialSync = options.initialSync ?? 'watch-list';
  }

  /** The resourceVersion of the last list, event or bookmark; `undefined` before the first list. */
  get lastSyncResourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  /**
   * True while the API server does not serve the resource: the last failed attempt got 404 NotFound
   * and no list has succeeded since (e.g. a controller started before its CRD was installed).
   */
  get resourceMissing(): boolean {
    return this.#resourceMissing;
  }

  /**
   * From now on lists and watches only the objects `shardSelector` selects (server-side sharding,
   * KEP-5866), or nothing at all for `undefined` (what `shardSelector()` returns for no buckets: the
   * API has no selector that matches nothing, and an absent one means everything). Stops the current
   * watch (or list, or backoff) and lists at once with the new selector; the list replaces the sink's
   * content as a relist does, then the watch goes on from its resourceVersion with the same selector.
   * Selecting nothing replaces the content with nothing, and sends no request until the next re-scope.
   *
   * The promise resolves once a list of this scope (or of a later re-scope, which supersedes it) is in
   * the sink. A failed list is retried as a relist is, with the same backoff, for as long as it takes;
   * the promise rejects only with `signal`'s reason. Called before `run`, it sets the scope of the first
   * list. A re-scope is no relist: `metrics.relist` does not count it (it is planned, not a lost watch).
   * Lists of a re-scoped reflector are plain lists, never streaming ones (KEP-5866 defines the
   * selector on list and watch; the list's answer is also what tells whether the server applied it).
   */
  rescope(shardSelector: string | undefined, signal?: AbortSignal): Promise<void> {
    this.#sharded = true;
    this.#shardSelector = shardSelector;
    this.#listDue = true;
    const generation = ++this.#generation;
    this.#attempt?.abort();
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#rescopeWaiters = this.#rescopeWaiters.filter((waiter) => waiter !== entry);
        reject(abortReason(signal));
      };
      const entry: RescopeWaiter = {
        generation,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.#rescopeWaiters.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Runs until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    this.#safely(() => this.#metrics.started?.(this.#client.resource));
    while (!signal.aborted) {
      const attempt = new AbortController();
      this.#attempt = attempt;
      this.#attemptGeneration = this.#generation;
      const attemptSignal = AbortSignal.any([signal, attempt.signal]);
      if (this.#sharded && this.#shardSelector === undefined) {
        // A shard holding no bucket: an empty cache, synced, and no request until a re-scope.
        if (this.#listDue) this.#listed([], '');
        await untilAborted(attemptSignal);
        continue;
      }
      let failure: Failure | undefined;
      let phase: 'list' | 'watch' = 'list';
      const streamingList = this.#listDue && this.#initialSync === 'watch-list' && !this.#sharded;
      try {
        if (this.#listDue && !streamingList) {
          if (!(await this.#listOnce(attemptSignal))) continue;
        }
        phase = 'watch';
        failure = await this.#watchOnce(attemptSignal, streamingList);
      } catch (error) {
        // Only while the initial events last: the same watch goes on after them, as any other.
        if (streamingList && this.#listDue && !isAborted(attemptSignal) && isStreamingListRefusal(error)) {
          this.#fallBackToList(error);
          continue;
        }
        failure = {
          error: error instanceof Error ? error : new Error(String(error)),
          reason: failureReason(error, phase),
        };
      }
      if (isAborted(signal)) return;
      // Re-scoped meanwhile: whatever this attempt did or failed at, the next one lists anew, at once.
      if (attempt.signal.aborted) continue;
      if (failure === undefined) continue;
      if (failure.reason === FailureReason.Gone) {
        this.#listDue = true;
        this.#safely(() => this.#metrics.relist?.(this.#client.resource));
      }
      // The collection is gone with its CRD (or never existed): once it is served again, only a list
      // tells what exists. A relist only if a list had succeeded: retrying the initial list, or a relist
      // already counted, is not another.
      if (failure.reason === FailureReason.NotFound && !this.#listDue) {
        this.#listDue = true;
        this.#safely(() => this.#metrics.relist?.(this.#client.resource));
      }
      this.#resourceMissing = failure.reason === FailureReason.NotFound;
      const retryAfterMs = failure.error instanceof KubeApiError ? (failure.error.retryAfterMs ?? 0) : 0;
      const delayMs = Math.max(this.#backoff.step(), retryAfterMs);
      this.#report(failure, delayMs, this.#listDue);
      await sleep(this.#clock, delayMs, attemptSignal);
    }
  }

  /**
   * Lists and replaces the cache; false when aborted. A method of its own so that the decoded list
   * dies with this frame: as a local of `run`, which stays suspended while the watch runs, it was kept
   * alive until the next list, every listed object with it, the ones the transform had replaced
   * included (V8 keeps a suspended async function's out-of-scope locals).
   */
  async #listOnce(signal: AbortSignal): Promise<boolean> {
    const list = this.#sharded
      ? await this.#client.list(signal, this.#shardSelector)
      : await this.#client.list(signal);
    if (isAborted(signal)) return false;
    this.#listed(list.items, list.resourceVersion);
    return true;
  }

  #listed(items: T[], resourceVersion: string): void {
    this.#sink.replace(items, resourceVersion);
    this.#resourceVersion = resourceVersion;
    this.#listDue = false;
    this.#resourceServed();
    this.#listedGeneration = this.#attemptGeneration;
    const due = this.#rescopeWaiters.filter(({ generation }) => generation <= this.#listedGeneration);
    if (due.length === 0) return;
    this.#rescopeWaiters = this.#rescopeWaiters.filter((waiter) => !due.includes(waiter));
    for (const waiter of due) waiter.resolve();
  }

  /**
   * Watches until the server ends the watch; a watch closed at once without events is a failure.
   * `streamingList`: the watch starts with the collection's state, from the newest resourceVersion
   * (`''`, a consistent read, as a list's), kept in `initial` until the bookmark that ends it, which
   * replaces the sink's content; a watch that ends before that bookmark is a failure.
   */
  async #watchOnce(signal: AbortSignal, streamingList: boolean): Promise<Failure | undefined> {
    const startedAt = this.#clock.now();
    let received = 0;
    const timeoutSeconds = Math.floor(this.#minWatchTimeoutSeconds * (1 + this.#random()));
    const events = this.#client.watch({
      resourceVersion: streamingList ? '' : (this.#resourceVersion ?? ''),
      ...(streamingList ? { sendInitialEvents: true } : {}),
      ...(this.#shardSelector === undefined ? {} : { shardSelector: this.#shardSelector }),
      timeoutSeconds,
      inactivityTimeoutMs: this.#inactivityTimeoutMs,
      signal,
    });
    // Reassigned, not left to the scope: this frame stays suspended for the rest of the watch.
    let initial = streamingList ? new InitialEvents<T>() : undefined;
    for await (const event of events) {
      if (signal.aborted) return undefined;
      received++;
      switch (event.type) {
        case 'ADDED':
        case 'MODIFIED':
        case 'DELETED':
          if (initial !== undefined) {
            initial.apply(event);
            break;
          }
          this.#sink.apply(event);
          this.#resourceVersion = event.object.metadata?.resourceVersion ?? this.#resourceVersion;
          break;
        case 'BOOKMARK':
          if (initial !== undefined) {
            if (!isInitialEventsEnd(event.object)) {
              throw new StreamingListRefusedError(
                'the API server sent a bookmark before the end of the initial events: it ignores sendInitialEvents',
              );
            }
            this.#listed(initial.items(), event.object.metadata?.resourceVersion ?? '');
            initial = undefined;
            break;
          }
          this.#resourceVersion = event.object.metadata?.resourceVersion ?? this.#resourceVersion;
          break;
        case 'ERROR':
          throw KubeApiError.fromStatus(event.object);
        default:
          throw new KubeApiError(`unknown watch event type ${String((event as { type: unknown }).type)}`, {
            failure: KubeApiFailure.Decode,
          });
      }
    }
    if (signal.aborted) return undefined;
    if (received === 0 && this.#clock.now() - startedAt < SHORT_WATCH_MS) {
      return {
        error: new KubeApiError('watch closed by the server at once without any event', {
          failure: KubeApiFailure.Network,
        }),
        reason: FailureReason.ShortWatch,
      };
    }
    if (initial !== undefined) {
      return {
        error: new KubeApiError('streaming list ended by the server before the end of its initial events', {
          failure: KubeApiFailure.Network,
        }),
        reason: FailureReason.Network,
      };
    }
    return undefined;
  }

  /** The server does not do streaming lists: list, now and from now on. Told once, as a fact, not a failure. */
  #fallBackToList(error: unknown): void {
    this.#initialSync = 'list';
    this.#safely(() => {
      this.#logger.debug('the API server does not do streaming lists (WatchList); listing instead', {
        resource: this.#client.resource,
        statusCode: error instanceof KubeApiError ? error.status : undefined,
        error: error instanceof Error ? error.message : String(error),
      });
    });
  }

  #resourceServed(): void {
    this.#resourceMissing = false;
    // A resource that goes missing again later deserves its line again, at once.
    this.#missingResourceLoggedAt = undefined;
  }

  #report(failure: Failure, retryInMs: number, listing: boolean): void {
    this.#safely(() => this.#metrics.watchError?.(this.#client.resource, failure.reason));
    this.#safely(() => {
      if (failure.reason === FailureReason.NotFound) this.#logMissingResource(failure);
      else this.#logFailure(failure, retryInMs, listing);
    });
    if (this.#onError !== undefined) {
      const onError = this.#onError;
      this.#safely(() => {
        onError(failure.error);
      });
    }
  }

  #logFailure(failure: Failure, retryInMs: number, listing: boolean): void {
    this.#logger.warn(failureMessage(failure.reason, listing), {
      ...this.#failureFields(failure),
      retryInMs,
    });
  }

  #logMissingResource(failure: Failure): void {
    const now = this.#clock.now();
    if (!shouldLogMissingResource(this.#missingResourceLoggedAt, now)) return;
    this.#missingResourceLoggedAt = now;
    this.#logger.warn(missingResourceMessage(this.#client.type), this.#failureFields(failure));
  }

  #failureFields({ error, reason }: Failure): Record<string, unknown> {
    return {
      resource: this.#client.resource,
      reason,
      statusCode: error instanceof KubeApiError ? error.status : undefined,
      error: error.message,
    };
  }

  // Observability hooks are user code: a throwing logger or metric must not end the reflector.
  #safely(hook: () => void): void {
    try {
      hook();
    } catch {
      // Nothing sensible left to report to; the loop must go on.
    }
  }
}

/** `listing`: the next attempt is a list (none succeeded yet, or the last watch expired). */
function failureMessage(reason: FailureReason, listing: boolean): string {
  if (reason === FailureReason.Gone) return 'watch expired; relisting';
  return listing ? 'list failed; retrying' : 'watch failed; resuming from the last resourceVersion';
}

/** Resolves when `signal` aborts (no timer: `setTimeout` cannot wait forever). */
function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    signal.addEventListener(
      'abort',
      () => {
        resolve();
      },
      { once: true },
    );
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('the re-scope was aborted', 'AbortError');
}

// Reads `aborted` through a call so that TypeScript does not narrow it across awaits.
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
