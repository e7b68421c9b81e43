/**
 * Kubernetes Events (`events.k8s.io/v1`) in the style of client-go's `tools/events` recorder.
 *
 * `recorder.event(regarding, { type, reason, action, note, related })` returns at once and never throws:
 * the API write happens in the background and failures are logged (an event is a diagnostic; it must
 * not fail a reconcile). `close()` waits for all of it.
 *
 * Aggregation. Events are identical when regarding (apiVersion, kind, namespace, name, uid, fieldPath),
 * related, type, reason, action and note are equal. The first one is created
 * (`<regarding name>.<hex unix nanoseconds>`, a long name cut and hashed to stay within 253 characters:
 * see `eventName`; in the regarding object's namespace, `default` for cluster-scoped objects). Repeats are not created again: they increment a series, and the Event's
 * `series.count`/`series.lastObservedTime` are written with a merge PATCH at most once per
 * `seriesPatchIntervalMs` (default 30 s) per Event, counting from the previous write; repeats in
 * between are only counted, and the next allowed patch carries the latest count. A series whose Event
 * was deleted meanwhile (the API server's 1 h TTL) is recreated with the series. A series not observed
 * for `seriesFinishMs` (6 min, client-go's value) is finished: its pending count is flushed and the next
 * identical event starts a new Event.
 *
 * Differences from client-go: client-go keys aggregation without type and note and with the
 * regarding object's resourceVersion, and patches a series only on its first repeat and then every
 * 30 min. Here a different note is a different event (the note usually carries the detail that
 * changed), resourceVersion is ignored (it changes on every status write, which would defeat
 * aggregation), and counts reach the API within 30 s.
 *
 * Notes are redacted exactly as log lines are (`SecretRegistry.redactText`: registered secrets,
 * `Basic`/`Bearer` credentials, JWTs) before anything else looks at them: notes often carry a third
 * party's error text, which may echo the request's credentials, and Events are readable by anyone who
 * may list Events in the namespace.
 *
 * Spam protection. Creating a new Event takes a token from a bucket per regarding object (burst 25,
 * one token back every 5 min: client-go's `EventSourceObjectSpamFilter` defaults). Without a token the
 * event is dropped and counted (`stats().dropped`, `onDrop`). Series increments are free: they cost
 * at most one patch per interval anyway.
 *
 * Off the critical path. Like client-go's broadcaster, writes are buffered and sent one at a time, in
 * the order they were recorded (a series patch never overtakes its create). Through a `KubeClient` they
 * go at `background` priority: only once no reconcile's request has been on its way for 20 ms (a
 * burst's requests come closer together), and never with a rate-limiter token a reconcile waits for.
 * So under a burst they wait instead of delaying the work they describe; a new Event that finds `maxQueuedWrites` writes already waiting is dropped and counted
 * (cause `queue-full`), the way client-go drops events when its 1000-event queue is full.
 */
import type { Logger } from 'winston';
import { realClock, type Clock } from '@loopwright/core';
import { isAlreadyExists, isNotFound, TokenBucket } from '@loopwright/client';
import type { KubeClient } from '@loopwright/client';
import { createSilentLogger } from '../log/logger.ts';
import { globalSecrets, type SecretRegistry } from '../log/redact.ts';
import { eventName } from './event-name.ts';
import { microTime } from './micro-time.ts';
import { kubeEventSink, type EventSink } from './sink.ts';
import { truncateUtf8 } from './truncate.ts';
import type { EventInput, EventsV1Event, ObjectReference } from './types.ts';

/** The API server's limits (`k8s.io/kubernetes/pkg/apis/core/validation`). */
export const NOTE_MAX_BYTES = 1024;
const FIELD_MAX_BYTES = 128;
/** Bound on remembered series and spam buckets, as client-go's LRU caches (4096 entries). */
const MAX_CACHE_ENTRIES = 4096;

type DropCause = 'spam-filter' | 'queue-full' | 'closed' | 'invalid';

export interface EventRecorderOptions {
  /** Writes go through this client (limiter, metrics). Either `client` or `sink` is required. */
  client?: KubeClient;
  /** Alternative write target (tests). */
  sink?: EventSink;
  /** `reportingController` on every Event, e.g. `loopwright.dev/at-scheduler`. */
  reportingController: string;
  /** `reportingInstance`, e.g. the Pod name: tells replicas apart. */
  reportingInstance: string;
  logger?: Logger;
  /** Secrets redacted from notes. Default: the process-wide registry `registerSecret` fills, as the logger's. */
  secrets?: SecretRegistry;
  clock?: Clock;
  /** Minimum time between two writes of one Event (create -> patch, patch -> patch). Default 30 s. */
  seriesPatchIntervalMs?: number;
  /** A series unobserved this long is finished. Default 6 min. */
  seriesFinishMs?: number;
  /** Spam filter per regarding object. Default burst 25, one token per 300 000 ms. */
  spamFilter?: { burst: number; refillIntervalMs: number };
  /** Writes waiting to be sent beyond which a new Event is dropped. Default 1000 (client-go's `maxQueuedEvents`). */
  maxQueuedWrites?: number;
  /** Called for each event that is not recorded (spam filter, full queue, invalid, or after `close()`). */
  onDrop?: (drop: { regarding: ObjectReference; reason: string; cause: DropCause }) => void;
}

/** Counters since the recorder was created. */
export interface EventRecorderStats {
  /** Event objects created (including series recreated after their Event vanished). */
  created: number;
  /** Series patches sent successfully. */
  patched: number;
  /** Repeats folded into a series instead of creating an Event. */
  aggregated: number;
  /** Events not recorded: spam filter, full queue, invalid input, or after close. */
  dropped: number;
  /** API writes that failed (logged). */
  failed: number;
}

interface SeriesEntry {
  /** The aggregation key (see `#record`). */
  key: string;
  event: EventsV1Event;
  /** Occurrences observed so far (1 = no series yet). */
  count: number;
  /** The count the API server has (what the last successful write carried). */
  writtenCount: number;
  /** When it was last observed, on the monotonic clock (for intervals) and on the wall clock (for the API). */
  lastObservedMs: number;
  lastObservedWallMs: number;
  /** When the last write was issued: the next patch waits until this + interval. */
  lastWriteMs: number;
  /** Undefined until the create succeeded; patches then target this name. */
  name: string | undefined;
  timer: { cancel(): void } | undefined;
  removed: boolean;
}

export class EventRecorder {
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly #sink: EventSink;
  readonly #logger: Logger;
  readonly #secrets: SecretRegistry;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #finishMs: number;
  readonly #spam: { burst: number; refillIntervalMs: number };
  readonly #onDrop: EventRecorderOptions['onDrop'];
  readonly #series = new Map<string, SeriesEntry>();
  readonly #spamBuckets = new Map<string, TokenBucket>();
  readonly #maxQueuedWrites: number;
  /** Writes not yet started, in recording order; {@link #writer} sends them one at a time. */
  readonly #writes: (() => Promise<void>)[] = [];
  #writer: Promise<void> | undefined;
  readonly #stats: EventRecorderStats = { created: 0, patched: 0, aggregated: 0, dropped: 0, failed: 0 };
  #closed = false;
  #lastSweepMs: number;
  #nameSequence = 0;

  constructor(options: EventRecorderOptions) {
    const sink = options.sink ?? (options.client ? kubeEventSink(options.client) : undefined);
    if (!sink) throw new Error('EventRecorder needs a client (or a sink)');
    for (const field of ['reportingController', 'reportingInstance'] as const) {
      const value = options[field];
      if (!value || Buffer.byteLength(value) > FIELD_MAX_BYTES) {
        throw new Error(`EventRecorder: ${field} must be 1..${FIELD_MAX_BYTES} bytes, got "${value}"`);
      }
    }
    this.#sink = sink;
    this.reportingController = options.reportingController;
    this.reportingInstance = options.reportingInstance;
    this.#logger = options.logger ?? createSilentLogger();
    this.#secrets = options.secrets ?? globalSecrets;
    this.#clock = options.clock ?? realClock;
    this.#intervalMs = options.seriesPatchIntervalMs ?? 30_000;
    this.#finishMs = options.seriesFinishMs ?? 6 * 60_000;
    this.#spam = options.spamFilter ?? { burst: 25, refillIntervalMs: 5 * 60_000 };
    this.#onDrop = options.onDrop;
    this.#maxQueuedWrites = options.maxQueuedWrites ?? 1000;
    this.#lastSweepMs = this.#clock.now();
  }

  /** Records an event about `regarding`. Returns at once; never throws (see the module comment). */
  event(regarding: ObjectReference, input: EventInput): void {
    try {
      this.#record(regarding, input);
    } catch (error) {
      this.#logger.error('recording event failed', {
        error,
        reason: input.reason,
        regardingName: regarding.name,
      });
    }
  }

  /** Counters (a copy). */
  stats(): EventRecorderStats {
    return { ...this.#stats };
  }

  /** What it holds in memory now: open series, and objects whose spam-filter bucket is not full. */
  remembered(): { series: number; spamFilter: number } {
    return { series: this.#series.size, spamFilter: this.#spamBuckets.size };
  }

  /**
   * Stops recording (later events are dropped), writes every pending series count, and resolves when
   * all API writes have settled, or after `timeoutMs` (default: no limit): an API server that does not
   * answer must not hold a shutting-down process. Writes not started by then are given up, and logged.
   * Call it on shutdown so the last counts are not lost.
   */
  async close(timeoutMs = Infinity): Promise<void> {
    this.#closed = true;
    for (const entry of this.#series.values()) {
      entry.timer?.cancel();
      entry.timer = undefined;
      if (entry.count > entry.writtenCount) this.#enqueue(() => this.#flush(entry));
    }
    if (this.#writer === undefined) return;
    let deadline: { cancel(): void } | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      if (timeoutMs !== Infinity)
        deadline = this.#clock.setTimer(
          () => {
            resolve('timeout');
          },
          timeoutMs,
          { unref: true },
        );
    });
    // A function, not the field inline: the writer changes across awaits, which narrowing ignores.
    const current = (): Promise<void> | undefined => this.#writer;
    try {
      for (let writer = current(); writer !== undefined; writer = current()) {
        const outcome = await Promise.race([writer.then(() => 'written' as const), timedOut]);
        if (outcome === 'written') continue;
        const abandoned = this.#writes.length + 1;
        this.#writes.length = 0;
        this.#logger.warn('gave up Event writes at shutdown: the API server did not take them in time', {
          abandoned,
          timeoutMs,
        });
        return;
      }
    } finally {
      deadline?.cancel();
    }
  }

  #record(regarding: ObjectReference, input: EventInput): void {
    if (this.#closed) {
      this.#drop(regarding, input.reason, 'closed');
      return;
    }
    // Checked at run time too: callers outside TypeScript (or with casts) can pass anything.
    const type: string = input.type;
    if (!validField(input.reason) || !validField(input.action) || (type !== 'Normal' && type !== 'Warning')) {
      this.#logger.error(
        'dropping invalid event: reason and action must be 1..128 bytes, type Normal or Warning',
        {
          reason: input.reason,
          action: input.action,
          type: input.type,
        },
      );
      this.#drop(regarding, input.reason, 'invalid');
      return;
    }
    const now = this.#clock.now();
    const wallNow = this.#clock.wallTime();
    this.#sweep(now);
    const note = input.note === undefined ? undefined : this.#noteText(input.note);
    const key = JSON.stringify([
      referenceKey(regarding),
      input.related ? referenceKey(input.related) : null,
      input.type,
      input.reason,
      input.action,
      note ?? null,
    ]);

    const existing = this.#series.get(key);
    if (existing) {
      existing.count += 1;
      existing.lastObservedMs = now;
      existing.lastObservedWallMs = wallNow;
      this.#stats.aggregated += 1;
      // Keep the Map in least-recently-observed order for eviction.
      this.#series.delete(key);
      this.#series.set(key, existing);
      this.#scheduleFlush(existing, now);
      return;
    }

    if (this.#writes.length >= this.#maxQueuedWrites) {
      this.#drop(regarding, input.reason, 'queue-full');
      return;
    }
    if (!this.#takeSpamToken(regarding)) {
      this.#drop(regarding, input.reason, 'spam-filter');
      return;
    }

    const event: EventsV1Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: '', namespace: regarding.namespace || 'default' },
      eventTime: microTime(wallNow),
      reportingController: this.reportingController,
      reportingInstance: this.reportingInstance,
      action: input.action,
      reason: input.reason,
      type: input.type,
      regarding: cleanReference(regarding),
    };
    if (note !== undefined) event.note = note;
    if (input.related) event.related = cleanReference(input.related);
    const entry: SeriesEntry = {
      key,
      event,
      count: 1,
      writtenCount: 0,
      lastObservedMs: now,
      lastObservedWallMs: wallNow,
      lastWriteMs: now,
      name: undefined,
      timer: undefined,
      removed: false,
    };
    this.#series.set(key, entry);
    this.#evictOverflow();
    this.#enqueue(() => this.#create(entry));
  }

  /** Creates the Event (with the series when recreating one); one retry with a new name on a name clash. */
  async #create(entry: SeriesEntry): Promise<void> {
    const count = entry.count;
    const body: EventsV1Event = {
      ...entry.event,
      metadata: { ...entry.event.metadata, name: this.#eventName(entry.event.regarding.name) },
    };
    if (count > 1) body.series = { count, lastObservedTime: microTime(entry.lastObservedWallMs) };
    try {
      let created: EventsV1Event;
      try {
        created = await this.#sink.create(body.metadata.namespace, body);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        body.metadata.name = this.#eventName(entry.event.regarding.name);
        created = await this.#sink.create(body.metadata.namespace, body);
      }
      entry.name = created.metadata.name || body.metadata.name;
      entry.writtenCount = count;
      this.#stats.created += 1;
    } catch (error) {
      this.#stats.failed += 1;
      this.#logger.error('creating event failed', {
        error,
        namespace: body.metadata.namespace,
        reason: body.reason,
        regardingName: body.regarding.name,
      });
      // Forget it: the next identical event tries a fresh create instead of patching nothing.
      if (this.#series.get(entry.key) === entry) this.#series.delete(entry.key);
      entry.removed = true;
      entry.timer?.cancel();
    }
  }

  /** Writes the latest count to the API (patch, or recreate if the Event is gone). */
  async #flush(entry: SeriesEntry): Promise<void> {
    if (entry.name === undefined || entry.count <= entry.writtenCount) return;
    const count = entry.count;
    const series = { count, lastObservedTime: microTime(entry.lastObservedWallMs) };
    entry.lastWriteMs = this.#clock.now();
    try {
      await this.#sink.patchSeries(entry.event.metadata.namespace, entry.name, series);
      entry.writtenCount = Math.max(entry.writtenCount, count);
      this.#stats.patched += 1;
    } catch (error) {
      if (isNotFound(error)) {
        // Expired (1 h TTL) or deleted: client-go recreates it with the series.
        return this.#create(entry);
      }
      this.#stats.failed += 1;
      this.#logger.error('updating event series failed', {
        error,
        namespace: entry.event.metadata.namespace,
        event: entry.name,
      });
    }
  }

  #scheduleFlush(entry: SeriesEntry, now: number): void {
    if (entry.timer || entry.removed) return;
    const delay = entry.lastWriteMs + this.#intervalMs - now;
    if (delay <= 0) {
      entry.lastWriteMs = now;
      this.#enqueue(() => this.#flush(entry));
      return;
    }
    // unref'd: a deferred series patch alone must not keep a process alive; close() flushes it.
    entry.timer = this.#clock.setTimer(
      () => {
        entry.timer = undefined;
        if (!entry.removed) this.#enqueue(() => this.#flush(entry));
      },
      delay,
      { unref: true },
    );
  }

  /** Queues `work` behind every write recorded before it; `close()` waits for the queue to drain. */
  #enqueue(work: () => Promise<void>): void {
    this.#writes.push(work);
    this.#writer ??= this.#drain();
  }

  async #drain(): Promise<void> {
    // Started on a later microtask: repeats recorded in the same tick go with the create as a series.
    await Promise.resolve();
    for (let work = this.#writes.shift(); work !== undefined; work = this.#writes.shift()) {
      try {
        await work();
      } catch (error) {
        this.#logger.error('event write failed', { error });
      }
    }
    this.#writer = undefined;
  }

  /**
   * Finishes series not observed for `seriesFinishMs`, and forgets spam-filter buckets that have
   * refilled; runs at most once per minute.
   */
  #sweep(now: number): void {
    if (now - this.#lastSweepMs < Math.min(60_000, this.#finishMs)) return;
    this.#lastSweepMs = now;
    for (const [key, entry] of this.#series) {
      // Least recently observed first: stop at the first one still live.
      if (now - entry.lastObservedMs < this.#finishMs) break;
      this.#finish(key, entry);
    }
    // A full bucket decides exactly as the fresh one the next event would get, so forgetting it changes
    // no decision. Kept, a bucket stayed for every object that ever had an Event, long after the object
    // was gone, until the 4096-entry bound: about 1.2 KB each, a heap that grew for hours (the soak saw
    // at-scheduler's grow by one bucket per At, one At every 3 s).
    for (const [key, bucket] of this.#spamBuckets) {
      if (bucket.tokens >= bucket.burst) this.#spamBuckets.delete(key);
    }
  }

  #evictOverflow(): void {
    while (this.#series.size > MAX_CACHE_ENTRIES) {
      const first = this.#series.entries().next().value;
      if (!first) return;
      this.#finish(first[0], first[1]);
    }
  }

  #finish(key: string, entry: SeriesEntry): void {
    this.#series.delete(key);
    entry.timer?.cancel();
    entry.timer = undefined;
    if (entry.count > entry.writtenCount) this.#enqueue(() => this.#flush(entry));
    entry.removed = true;
  }

  #takeSpamToken(regarding: ObjectReference): boolean {
    const key = referenceKey(regarding);
    let bucket = this.#spamBuckets.get(key);
    if (bucket) {
      this.#spamBuckets.delete(key);
    } else {
      bucket = new TokenBucket({
        qps: 1000 / this.#spam.refillIntervalMs,
        burst: this.#spam.burst,
        clock: this.#clock,
      });
    }
    this.#spamBuckets.set(key, bucket);
    while (this.#spamBuckets.size > MAX_CACHE_ENTRIES) {
      const oldest = this.#spamBuckets.keys().next().value;
      if (oldest === undefined) break;
      this.#spamBuckets.delete(oldest);
    }
    return bucket.tryTake();
  }

  #drop(regarding: ObjectReference, reason: string, cause: DropCause): void {
    this.#stats.dropped += 1;
    this.#onDrop?.({ regarding, reason, cause });
    if (cause === 'spam-filter' || cause === 'queue-full') {
      this.#logger.debug(`event dropped: ${cause === 'spam-filter' ? 'spam filter' : 'write queue full'}`, {
        reason,
        regardingName: regarding.name,
        regardingNamespace: regarding.namespace,
      });
    }
  }

  /** Redacted before truncated: a cut could leave a secret's prefix that no longer matches. */
  #noteText(note: string): string {
    return truncateUtf8(this.#secrets.redactText(note), NOTE_MAX_BYTES);
  }

  /** client-go's `<name>.<hex unix nanoseconds>`; the sub-millisecond digits are a sequence so names stay unique within a process. */
  #eventName(regardingName: string): string {
    const nanos =
      BigInt(Math.floor(this.#clock.wallTime())) * 1_000_000n + BigInt(this.#nameSequence++ % 1_000_000);
    return eventName(regardingName, nanos);
  }
}

function validField(value: string): boolean {
  return typeof value === 'string' && value.length > 0 && Buffer.byteLength(value) <= FIELD_MAX_BYTES;
}

/** Identity of a referenced object for aggregation and spam buckets (resourceVersion excluded). */
function referenceKey(ref: ObjectReference): string {
  return JSON.stringify([
    ref.apiVersion,
    ref.kind,
    ref.namespace ?? '',
    ref.name,
    ref.uid ?? '',
    ref.fieldPath ?? '',
  ]);
}

function cleanReference(ref: ObjectReference): ObjectReference {
  const out: ObjectReference = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name };
  if (ref.namespace) out.namespace = ref.namespace;
  if (ref.uid) out.uid = ref.uid;
  if (ref.resourceVersion) out.resourceVersion = ref.resourceVersion;
  if (ref.fieldPath) out.fieldPath = ref.fieldPath;
  return out;
}
