import { realClock, type Clock, type Timer } from '@loopwright/core';
import type { KubeClient, KubeObject, ProtobufDecoder } from '@loopwright/client';
import { HandlerError, InformerStoppedError } from './errors.ts';
import { objectKey, type Indexers } from './indexers.ts';
import { StringInterner } from './intern.ts';
import {
  Reflector,
  type ObjectEvent,
  type ReflectorBackoffOptions,
  type ReflectorSink,
} from './reflector.ts';
import { Store, type Lister } from './store.ts';
import type { InitialSync } from './streaming-list.ts';
import { createResourceClient, type ResourceClient } from './list-watch.ts';
import {
  consoleLogger,
  resourceTypeOf,
  type InformerMetrics,
  type ListWatchScope,
  type Logger,
} from './types.ts';

/**
 * Callbacks for cache changes. They run synchronously, in event order, after the cache has been
 * updated (a lister read inside a handler sees the new state). A returned promise is not awaited
 * (a slow handler must not hold up the watch); its rejection is caught and reported like a throw.
 * Handlers should only enqueue keys; do the work in a workqueue worker.
 */
export interface EventHandlers<T extends KubeObject> {
  /** `isInInitialList`: the object came from the first list (or is a catch-up add for a late handler). */
  onAdd?(obj: T, isInInitialList: boolean): unknown;
  /** A changed object, or `old === new` on a periodic resync. */
  onUpdate?(oldObj: T, newObj: T): unknown;
  /**
   * `finalStateUnknown`: the object disappeared while the watch was disconnected and was noticed by
   * a relist, so `obj` is the last state this cache saw, not the state at deletion (client-go's
   * `DeletedFinalStateUnknown`, without the wrapper type).
   */
  onDelete?(obj: T, info: { finalStateUnknown: boolean }): unknown;
}

/** Returned by {@link Informer.addEventHandler}. */
export interface HandlerRegistration {
  /** Stops delivery to this handler. Idempotent. */
  remove(): void;
}

/** Settings shared by standalone informers and the {@link SharedInformerFactory}. */
export interface InformerSettings<T extends KubeObject = KubeObject> {
  /** Extra indexes; a `namespace` index always exists. */
  indexers?: Indexers<T>;
  /** Re-deliver every cached object as `onUpdate(obj, obj)` this often (ms). 0/undefined: never. */
  resyncMs?: number;
  /**
   * Applied to every object before it is cached, so before any handler or lister sees it, e.g.
   * {@link stripManagedFields} to save memory. It gets the freshly decoded object, which nothing else
   * holds yet: it may change and return it. It must keep whatever any reader of this cache uses (see
   * the README); the informer itself needs `metadata.name`, `namespace` and `resourceVersion`.
   */
  transform?: (obj: T) => T;
  /** Deep-freeze cached objects so that accidental mutation throws. Costs CPU; meant for development and tests. */
  freezeObjects?: boolean;
  logger?: Logger;
  metrics?: InformerMetrics;
  /**
   * Every list/watch failure (a `KubeApiError`, or any error for a bug) and handler failure (a
   * {@link HandlerError}), after it was logged.
   */
  onError?: (error: Error) => void;
  clock?: Clock;
  backoff?: ReflectorBackoffOptions;
  /** See {@link ReflectorOptions.minWatchTimeoutSeconds}. Default 300. */
  minWatchTimeoutSeconds?: number;
  /** See {@link ReflectorOptions.inactivityTimeoutMs}. Default 90 s. */
  inactivityTimeoutMs?: number;
  /** List page size. Default 500. */
  pageSize?: number;
  /**
   * How the cache is filled at start and after 410 Gone: `watch-list`, a streaming list (WatchList,
   * KEP-3157), or `list`, a paginated list then a watch. Handlers, `hasSynced` and the relist diff are
   * the same either way. Default `watch-list`; a server that does not do streaming lists gets lists
   * (see the README).
   */
  initialSync?: InitialSync;
}

/**
 * Where an informer lists and watches: a scope of a resource, through `client`, in JSON or, with a
 * `protobuf` decoder (built-in kinds only), in protobuf.
 */
export interface InformerSource<T extends KubeObject> extends ListWatchScope {
  /** The API server connection (credentials, rate limit, request metrics). */
  client: KubeClient;
  /** List and watch in protobuf, each object decoded by this function (see {@link ProtobufDecoder}). */
  protobuf?: ProtobufDecoder<T> | undefined;
}

/**
 * Options of {@link Informer}: settings plus where to list/watch from, a scope on a `client` or any
 * {@link ResourceClient} (tests script one).
 */
export type InformerOptions<T extends KubeObject> = InformerSettings<T> &
  (InformerSource<T> | { resourceClient: ResourceClient<T> });

interface Registration<T extends KubeObject> {
  handlers: EventHandlers<T>;
}

/**
 * A cache of one resource kept current by a {@link Reflector}, with event handlers and listers.
 *
 * - `hasSynced()` turns true once the first complete list is in the cache and was delivered to
 *   every handler registered at that time; it never turns false again (a relist keeps serving the
 *   old content until the new list replaces it).
 * - A relist delivers the diff against the cache: adds for new objects, updates for objects whose
 *   resourceVersion changed, deletes with `finalStateUnknown: true` for objects that are gone.
 *   Unchanged objects are not re-delivered (client-go re-delivers all of them as updates).
 * - Handlers are isolated: a throwing or rejecting handler is logged and reported to `onError`;
 *   other handlers and later events are unaffected.
 * - `stop()` is final and quiet: in-flight requests are aborted, no error is reported, no handler is
 *   called afterwards; pending `waitForSync` calls reject with {@link InformerStoppedError}.
 */
export class Informer<T extends KubeObject> {
  /** Typed read access to the cache. Objects are shared: do not mutate them. */
  readonly lister: Lister<T>;
  readonly #store: Store<T>;
  readonly #reflector: Reflector<T>;
  readonly #resource: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #onError: ((error: Error) => void) | undefined;
  readonly #transform: ((obj: T) => T) | undefined;
  readonly #freeze: boolean;
  readonly #interner = new StringInterner();
  #registrations: readonly Registration<T>[] = [];
  #synced = false;
  #syncWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  #abort: AbortController | undefined;
  /** Aborted by `stop()` with an {@link InformerStoppedError}: what pending re-scopes reject with. */
  readonly #stopping = new AbortController();
  #stopped = false;
  #resyncMs = 0;
  #resyncTimer: Timer | undefined;

  constructor(options: InformerOptions<T>) {
    const client = 'resourceClient' in options ? options.resourceClient : sourceClient(options);
    this.#resource = client.resource;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? consoleLogger;
    this.#onError = options.onError;
    this.#transform = options.transform;
    this.#freeze = options.freezeObjects ?? false;
    this.#store = new Store<T>(options.indexers);
    this.lister = this.#store;
    this.#resyncMs = options.resyncMs ?? 0;
    const sink: ReflectorSink<T> = {
      replace: (items) => {
        this.#replace(items);
      },
      apply: (event) => {
        this.#apply(event);
      },
    };
    this.#reflector = new Reflector<T>({
      client,
      sink,
      clock: this.#clock,
      logger: this.#logger,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.minWatchTimeoutSeconds === undefined
        ? {}
        : { minWatchTimeoutSeconds: options.minWatchTimeoutSeconds }),
      ...(options.inactivityTimeoutMs === undefined
        ? {}
        : { inactivityTimeoutMs: options.inactivityTimeoutMs }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
      ...(options.initialSync === undefined ? {} : { initialSync: options.initialSync }),
    });
  }

  /** `resource.group` this informer watches. */
  get resource(): string {
    return this.#resource;
  }

  /** The resourceVersion of the last list, event or bookmark seen. */
  get lastSyncResourceVersion(): string | undefined {
    return this.#reflector.lastSyncResourceVersion;
  }

  /** Starts listing and watching. Idempotent; throws after `stop()` (create a new informer instead). */
  start(): void {
    if (this.#stopped) throw new InformerStoppedError(`informer for ${this.#resource} was stopped`);
    if (this.#abort !== undefined) return;
    this.#abort = new AbortController();
    void this.#reflector.run(this.#abort.signal);
    this.#scheduleResync();
  }

  /** Stops for good. Quiet: see the class documentation. Idempotent. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#abort?.abort();
    this.#stopping.abort(new InformerStoppedError(`informer for ${this.#resource} was stopped`));
    this.#resyncTimer?.cancel();
    const waiters = this.#syncWaiters;
    this.#syncWaiters = [];
    for (const waiter of waiters) {
      waiter.reject(new InformerStoppedError(`informer for ${this.#resource} stopped before it synced`));
    }
  }

  /** True once the first complete list has been delivered. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /**
   * True while the API server does not serve this resource (404 on its list or watch, e.g. the CRD
   * is not installed). The informer keeps retrying and syncs on its own once the resource is served.
   */
  get resourceMissing(): boolean {
    return this.#reflector.resourceMissing;
  }

  /**
   * Resolves once synced. Rejects with the signal's reason if `signal` aborts first, or with
   * {@link InformerStoppedError} if the informer is stopped first. It does not time out by itself:
   * pass `AbortSignal.timeout(ms)` for controller-runtime's cache-sync timeout.
   */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (this.#stopped)
      return Promise.reject(new InformerStoppedError(`informer for ${this.#resource} was stopped`));
    // Rejects like a later abort does: a caller awaiting it must not get a synchronous throw instead.
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#syncWaiters = this.#syncWaiters.filter((waiter) => waiter !== entry);
        reject(abortReason(signal));
      };
      const entry = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (error: Error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      this.#syncWaiters.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Server-side sharding (KEP-5866): from now on this informer caches only the objects `shardSelector`
   * selects, or none for `undefined` (a shard holding no bucket; see {@link Reflector.rescope}). The
   * current watch stops and a list with the new selector replaces the cache as a relist does: adds for
   * objects now selected, updates for changed ones, deletes (`finalStateUnknown: true`) for objects no
   * longer selected. Resolves once that list is in the cache; a failed list is retried with the
   * reflector's backoff until it succeeds. Rejects with `signal`'s reason, or
   * {@link InformerStoppedError} once stopped. Before `start`, sets what the first list selects (an
   * informer selecting nothing then syncs at once, empty).
   */
  rescope(shardSelector: string | undefined, signal?: AbortSignal): Promise<void> {
    if (this.#stopped)
      return Promise.reject(new InformerStoppedError(`informer for ${this.#resource} was stopped`));
    const stopping = this.#stopping.signal;
    return this.#reflector.rescope(
      shardSelector,
      signal === undefined ? stopping : AbortSignal.any([stopping, signal]),
    );
  }

  /**
   * Registers handlers. If the cache already has content, the new handler first receives it as
   * synthetic adds (`isInInitialList: true`), synchronously, before this returns.
   */
  addEventHandler(handlers: EventHandlers<T>): HandlerRegistration {
    const registration: Registration<T> = { handlers };
    if (!this.#stopped) {
      for (const obj of this.#store.list()) this.#deliverAdd(registration, obj, true);
    }
    this.#registrations = [...this.#registrations, registration];
    return {
      remove: () => {
        this.#registrations = this.#registrations.filter((r) => r !== registration);
      },
    };
  }

  /** Adds indexes, also on a running informer (existing objects are indexed at once). */
  addIndexers(indexers: Indexers<T>): void {
    this.#store.addIndexers(indexers);
  }

  /**
   * Lowers the resync period to `ms` if it is shorter than the current one (several users of one
   * shared informer: the shortest requested period wins, like client-go).
   */
  requestResync(ms: number): void {
    if (ms <= 0 || (this.#resyncMs > 0 && this.#resyncMs <= ms)) return;
    this.#resyncMs = ms;
    if (this.#abort !== undefined && !this.#stopped) {
      this.#resyncTimer?.cancel();
      this.#scheduleResync();
    }
  }

  #scheduleResync(): void {
    if (this.#resyncMs <= 0) return;
    this.#resyncTimer = this.#clock.setTimer(() => {
      if (this.#stopped) return;
      if (this.#synced) {
        for (const obj of this.#store.list()) this.#dispatchUpdate(obj, obj);
      }
      this.#scheduleResync();
    }, this.#resyncMs);
  }

  #replace(items: T[]): void {
    if (this.#stopped) return;
    const isInitialList = !this.#synced;
    const listed = new Set<string>();
    for (const raw of items) {
      listed.add(objectKey(raw));
      const cached = this.#store.get(raw.metadata?.namespace, raw.metadata?.name ?? '');
      // Same resourceVersion = same content: keep the cached instance and do not notify.
      if (cached !== undefined && cached.metadata?.resourceVersion === raw.metadata?.resourceVersion)
        continue;
      const obj = this.#prepare(raw);
      this.#store.upsert(obj);
      if (cached === undefined) this.#dispatchAdd(obj, isInitialList);
      else this.#dispatchUpdate(cached, obj);
    }
    const vanished = this.#store.list().filter((obj) => !listed.has(objectKey(obj)));
    for (const obj of vanished) {
      this.#store.delete(obj.metadata?.namespace, obj.metadata?.name ?? '');
      this.#dispatchDelete(obj, true);
    }
    if (isInitialList) {
      this.#synced = true;
      const waiters = this.#syncWaiters;
      this.#syncWaiters = [];
      for (const waiter of waiters) waiter.resolve();
    }
  }

  #apply(event: ObjectEvent<T>): void {
    if (this.#stopped) return;
    const obj = this.#prepare(event.object);
    if (event.type === 'DELETED') {
      this.#store.delete(obj.metadata?.namespace, obj.metadata?.name ?? '');
      this.#dispatchDelete(obj, false);
      return;
    }
    const previous = this.#store.upsert(obj);
    // ADDED for a known object / MODIFIED for an unknown one can follow a relist race; the cache
    // state, not the event type, decides what handlers are told.
    if (previous === undefined) this.#dispatchAdd(obj, false);
    else this.#dispatchUpdate(previous, obj);
  }

  #prepare(raw: T): T {
    const obj = this.#interner.internObject(this.#transform === undefined ? raw : this.#transform(raw));
    return this.#freeze ? deepFreeze(obj) : obj;
  }

  #dispatchAdd(obj: T, isInInitialList: boolean): void {
    for (const registration of this.#registrations) this.#deliverAdd(registration, obj, isInInitialList);
  }

  #deliverAdd(registration: Registration<T>, obj: T, isInInitialList: boolean): void {
    const handlers = registration.handlers;
    if (handlers.onAdd !== undefined) this.#invoke('add', obj, () => handlers.onAdd?.(obj, isInInitialList));
  }

  #dispatchUpdate(oldObj: T, newObj: T): void {
    for (const registration of this.#registrations) {
      const handlers = registration.handlers;
      if (handlers.onUpdate !== undefined)
        this.#invoke('update', newObj, () => handlers.onUpdate?.(oldObj, newObj));
    }
  }

  #dispatchDelete(obj: T, finalStateUnknown: boolean): void {
    for (const registration of this.#registrations) {
      const handlers = registration.handlers;
      if (handlers.onDelete !== undefined) {
        this.#invoke('delete', obj, () => handlers.onDelete?.(obj, { finalStateUnknown }));
      }
    }
  }

  #invoke(event: 'add' | 'update' | 'delete', obj: T, call: () => unknown): void {
    // A handler may stop the informer in the middle of a batch (a relist diff, a resync).
    if (this.#stopped) return;
    try {
      const result = call();
      if (isPromiseLike(result)) {
        void result.then(undefined, (error: unknown) => {
          this.#handlerFailed(event, obj, error);
        });
      }
    } catch (error) {
      this.#handlerFailed(event, obj, error);
    }
  }

  #handlerFailed(event: 'add' | 'update' | 'delete', obj: T, cause: unknown): void {
    const error = new HandlerError(this.#resource, event, objectKey(obj), cause);
    try {
      this.#logger.error('informer event handler failed', {
        resource: this.#resource,
        event,
        key: error.key,
        error: error.message,
      });
      this.#onError?.(error);
    } catch {
      // A failing logger/onError must not break delivery either.
    }
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

function deepFreeze<V>(value: V): V {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('waitForSync was aborted', 'AbortError');
}

/** The {@link ResourceClient} of a scope, on its handle. */
function sourceClient<T extends KubeObject>(
  source: InformerSource<T> & Pick<InformerSettings<T>, 'pageSize'>,
): ResourceClient<T> {
  const { client, protobuf } = source;
  const handle = client.resource<T>(
    resourceTypeOf(source),
    protobuf === undefined ? {} : { protobuf: { decode: protobuf } },
  );
  return createResourceClient(handle, {
    namespace: source.namespace,
    labelSelector: source.labelSelector,
    fieldSelector: source.fieldSelector,
    pageSize: source.pageSize,
    encoding: protobuf === undefined ? 'json' : 'protobuf',
  });
}
