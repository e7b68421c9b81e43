import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import type { KubeClient, Resource } from '@loopwright/client';
import {
  objectKey,
  resourceTypeOf,
  type EventHandlers,
  type HandlerRegistration,
  type Informer,
  type KubeObject,
  type SharedInformerFactory,
} from '@loopwright/informer';
import type { ControllerReconcileMetrics, Metrics, ReconcileOutcome } from '@loopwright/metrics';
import { newRateLimitingQueue, type RateLimiter, type RateLimitingQueue } from '@loopwright/workqueue';
import type { Logger } from 'winston';
import { isTerminal } from '../errors/index.ts';
import type { ShardNeed } from '../manager/shard-plan.ts';
import type { ShardField } from '../sharding/space.ts';
import { OwnWrites } from '../writes/own-writes.ts';
import { ownStatusWriter } from '../writes/status-writer.ts';
import { enqueueFiltered } from './event-handler.ts';
import { controllerOwnerOf, enqueueControllerOwner, splitKey } from './mappers.ts';
import { isPanic } from './panic.ts';
import { reconcileDeadline } from './reconcile-deadline.ts';
import { and, type Predicate } from './predicates.ts';
import { ShardFilter, type ShardBy } from './shard-filter.ts';
import type { OwnedResource, PrimaryResource, ReconcileResult, Reconciler, Watch } from './types.ts';

export interface ControllerOptions<T extends KubeObject> {
  /** Unique per manager: the metrics' `controller` label, the queue name and the log field. */
  name: string;
  /** The primary resource: every key the controller reconciles names one of these. */
  for: PrimaryResource<T>;
  /** Resources whose controller owner is a primary object; their events reconcile that owner. */
  owns?: OwnedResource[];
  /** Other related resources with custom mappings to primary keys. */
  watches?: Watch[];
  /**
   * Events of every watch (`for`, `owns`, `watches`) must pass this as well as the watch's own
   * `predicate`, as controller-runtime's `WithEventFilter`. Default: all pass.
   */
  eventFilter?: Predicate;
  reconcile: Reconciler<T>;
  /** Workers reconciling distinct keys concurrently. Default 1, as controller-runtime. */
  maxConcurrentReconciles?: number;
  /** Retry backoff; default: max(per-key exponential 5 ms..1000 s, token bucket 10 qps burst 100). */
  rateLimiter?: RateLimiter;
  /**
   * Hand out keys by priority (controller-runtime's default since v0.23): what the informers' initial
   * lists and resyncs enqueue waits behind every change seen since, so a new object is reconciled at
   * once after a restart instead of behind the whole backlog; a requeue keeps the priority the key had.
   * False: one FIFO line for all. Default true.
   */
  usePriorityQueue?: boolean;
  /**
   * How long one reconcile may take before its signal aborts (controller-runtime's
   * `ReconciliationTimeout`); 0: no limit. Default: the Manager's (`--reconcile-timeout`).
   */
  reconcileTimeoutMs?: number;
  /**
   * What decides which replica reconciles a key when the Manager runs sharded (`ManagerOptions.sharding`):
   * the hash of the key's primary object's `metadata.uid`, or of the key's namespace (all of a
   * namespace's objects in one replica). Ignored without sharding. Default `'uid'`.
   */
  shardBy?: ShardBy;
}

/** What the Manager hands a controller when it starts it. */
export interface ControllerContext {
  factory: SharedInformerFactory;
  /** The reconcilers' client: `ReconcileRequest.status` writes through it. */
  client: KubeClient;
  logger: Logger;
  metrics?: Metrics;
  /** Aborted on shutdown or lost leadership: stop taking keys, let in-flight reconciles finish. */
  signal: AbortSignal;
  /**
   * Aborts the signal of every reconcile in flight (and of any that begins after): the work must stop
   * now, because leadership or the member Lease was lost, or because in-flight reconciles outlived the
   * graceful shutdown timeout. Not the shutdown itself: a stop only ends intake, and a reconcile in hand
   * runs to its end with its signal intact (controller-runtime cancels it at once; see the README,
   * "Shutdown"). Default: never.
   */
  abortReconciles?: AbortSignal;
  /** The reconcile timeout of a controller that sets none of its own; default 0: no limit. */
  reconcileTimeoutMs?: number;
  /**
   * The Manager runs sharded: nothing is reconciled but the keys of the buckets it hands over with
   * {@link Controller.startBuckets} (none at first).
   */
  sharded?: boolean;
}

/**
 * informer events -> keys -> rate-limited workqueue -> N workers -> `reconcile`.
 *
 * A key is never reconciled by two workers at once; events arriving during a reconcile collapse into
 * one more reconcile afterwards. Predicates (`eventFilter`, each watch's `predicate`) decide which
 * events enqueue at all. Outcomes, as controller-runtime: success forgets the key's backoff;
 * `requeueAfterMs` forgets it and adds the key after the delay; thrown errors, panics (see
 * `ReconcileResult`) and the deprecated `requeue` add it with backoff; a terminal error (see
 * `TerminalError`) is logged and counted but not retried.
 *
 * Keys wait in a priority queue (see `usePriorityQueue`): the initial lists' and resyncs' events at
 * `LOW_PRIORITY`, every change at `NORMAL_PRIORITY`; each requeue keeps the priority the key was
 * handed out with (controller-runtime drops it to the default: its issue #3157) unless the result names
 * one.
 *
 * A reconcile timeout aborts the reconcile's signal when it passes and counts it
 * (`controller_runtime_reconcile_timeouts_total`); the key stays processing until the reconcile returns,
 * so one that ignores its signal is reported but never runs beside a second reconcile of its object.
 * How it then ends (usually the abort's error: retried with backoff) is its outcome as any other.
 *
 * Status writes through `ReconcileRequest.status` are the controller's own (see `OwnWrites`): the next
 * reconcile reads the written object while the cache lags, and the write's echo enqueues nothing.
 *
 * Sharded (issue 39; the Manager's `sharding`, whether its caches hold everything or, server-side, only
 * the held buckets' objects: see {@link Controller.shardNeeds}),
 * the controller reconciles only the keys of the buckets it holds (see `ShardFilter`): a key is queued
 * only when its bucket is held, a key whose bucket was drained since it was queued is dropped when a
 * worker takes it (forgotten, not reconciled, not counted), {@link Controller.startBuckets} queues the
 * cached primary objects of newly held buckets as an initial list would, and
 * {@link Controller.drainBuckets} gives buckets up at once and resolves once none of their reconciles
 * is in flight. An owned object's event finds its bucket from its controller owner reference's uid,
 * which is the owner's.
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly #options: ControllerOptions<T>;
  /** Set by a sharded `run`: the filter, and how to queue the cached objects of buckets taken. */
  #sharding:
    | {
        filter: ShardFilter;
        enqueueCached: (buckets: ReadonlySet<number>) => void;
        discard: (keys: ReadonlySet<string>) => void;
      }
    | undefined;

  constructor(options: ControllerOptions<T>) {
    if (!options.name) throw new Error('a controller needs a name');
    const workers = options.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(workers) || workers < 1)
      throw new Error(`maxConcurrentReconciles must be a positive integer, got ${workers}`);
    this.name = options.name;
    this.#options = options;
  }

  /** Asks the factory for every informer this controller reads, so caches sync before it runs. */
  requestInformers(factory: SharedInformerFactory): void {
    factory.forResource(this.#options.for);
    for (const owned of this.#options.owns ?? []) factory.forResource(owned);
    for (const watch of this.#options.watches ?? []) factory.forResource(watch.resource);
  }

  /**
   * What each informer this controller reads needs when the Manager selects shards server-side (issue
   * 39, part 3): the primary's, its shard field. Owned objects' (`owns`): the namespace when sharded by
   * namespace (an owner and what it owns share one, so one hash selects both; not for a cluster-scoped
   * owner, whose keys hash the empty namespace while what it owns lives in namespaces); whole when
   * sharded by uid, since the server hashes an object's own uid and cannot hash its owner reference's:
   * the filter finds an owned object's bucket from that reference in the replica, as without
   * server-side selection. Watched resources (`watches`): always whole, as a watch's `map` may name keys in any
   * namespace (a cluster-scoped object, or one mapped across namespaces), which a selector on the
   * watched object's own namespace would miss.
   */
  shardNeeds(factory: SharedInformerFactory): ShardNeed<Informer<KubeObject>>[] {
    const shardBy = this.#options.shardBy ?? 'uid';
    const field: ShardField = shardBy === 'uid' ? 'object.metadata.uid' : 'object.metadata.namespace';
    const owned = shardBy === 'namespace' && this.#options.for.namespaced !== false ? field : undefined;
    return [
      { informer: factory.forResource(this.#options.for) as unknown as Informer<KubeObject>, field },
      ...(this.#options.owns ?? []).map((resource) => ({
        informer: factory.forResource(resource),
        field: owned,
      })),
      ...(this.#options.watches ?? []).map((watch) => ({
        informer: factory.forResource(watch.resource),
        field: undefined,
      })),
    ];
  }

  /**
   * Takes `buckets` (the Sharder's `start`, through the Manager): their keys are queued from now on, and
   * every cached primary object in them is queued at once at low priority, as by an initial list, so
   * nothing that changed while another replica held them is missed. Only while running sharded.
   */
  startBuckets(buckets: readonly number[]): void {
    if (this.#sharding === undefined) throw new Error(`controller ${this.name} is not running sharded`);
    this.#sharding.filter.hold(buckets);
    this.#sharding.enqueueCached(new Set(buckets));
  }

  /**
   * Gives `buckets` up at once: none of their keys is queued or begins a reconcile from now on. Resolves
   * once no reconcile of theirs is in flight (the Sharder's `drain`); their keys still queued or waiting
   * for a requeue are then dropped from the queue (the requeues of the drained reconciles included).
   */
  async drainBuckets(buckets: readonly number[]): Promise<void> {
    const sharding = this.#sharding;
    if (sharding === undefined) return;
    await sharding.filter.release(buckets);
    sharding.discard(sharding.filter.forget(new Set(buckets)));
  }

  /**
   * Runs until `context.signal` is aborted, then stops intake (keys still queued are not reconciled)
   * and resolves once every in-flight reconcile has finished (the Manager bounds how long it waits, and
   * aborts their signals through `context.abortReconciles` when it gives up on them).
   */
  async run(context: ControllerContext): Promise<void> {
    const { factory, client, signal } = context;
    const workers = this.#options.maxConcurrentReconciles ?? 1;
    const queue = newRateLimitingQueue({
      name: this.name,
      ordering: this.#options.usePriorityQueue === false ? 'fifo' : 'priority',
      ...(context.metrics ? { metricsProvider: context.metrics.workqueueProvider } : {}),
      ...(this.#options.rateLimiter ? { rateLimiter: this.#options.rateLimiter } : {}),
    });
    const metrics = context.metrics?.reconcile.forController(this.name, workers);
    const log = context.logger.child({ controller: this.name });
    const primary = factory.forResource<T>(this.#options.for);
    const resource = client.resource<T>(resourceTypeOf(this.#options.for));
    const ownWrites = new OwnWrites<T>();

    const { kind, group, namespaced } = this.#options.for;
    const shards = context.sharded
      ? new ShardFilter(this.#options.shardBy ?? 'uid', (key) => {
          const { namespace, name } = splitKey(key);
          return primary.lister.get(namespace, name)?.metadata?.uid;
        })
      : undefined;
    // `uidOf`: the uid of the key's primary object as the event's object carries it, if it does.
    const enqueueWith =
      (uidOf: (obj: KubeObject) => string | undefined) =>
      (key: string, priority: number, obj: KubeObject): void => {
        if (shards !== undefined && !shards.admit(key, uidOf(obj))) return;
        queue.add(key, priority);
      };
    const filter = <R extends KubeObject>(own: Predicate<R> | undefined): Predicate<R> =>
      and(...[this.#options.eventFilter, own].filter((p) => p !== undefined));
    const primaryHandlers = withoutEchoes(
      ownWrites,
      enqueueFiltered(
        enqueueWith((obj) => obj.metadata?.uid),
        (obj) => [objectKey(obj)],
        filter(this.#options.for.predicate),
      ),
    );
    const registrations: HandlerRegistration[] = [primary.addEventHandler(primaryHandlers)];
    const ownerKeys = enqueueControllerOwner(kind, group, namespaced);
    const ownerUid = (obj: KubeObject) => controllerOwnerOf(obj, kind, group)?.uid;
    for (const owned of this.#options.owns ?? [])
      registrations.push(
        factory
          .forResource(owned)
          .addEventHandler(enqueueFiltered(enqueueWith(ownerUid), ownerKeys, filter(owned.predicate))),
      );
    for (const watch of this.#options.watches ?? [])
      registrations.push(
        factory.forResource(watch.resource).addEventHandler(
          enqueueFiltered(
            enqueueWith(() => undefined),
            watch.map,
            filter(watch.predicate),
          ),
        ),
      );
    if (shards !== undefined) {
      this.#sharding = {
        filter: shards,
        enqueueCached: (buckets) => {
          for (const obj of primary.lister.list())
            if (shards.objectIn(obj, buckets)) primaryHandlers.onAdd?.(obj, true);
        },
        discard: (keys) => {
          if (keys.size > 0) queue.discard((key) => keys.has(key));
        },
      };
    }

    const stop = (): void => {
      for (const registration of registrations) registration.remove();
      queue.shutDown();
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });

    log.info('starting workers', { workers });
    const timeoutMs = this.#options.reconcileTimeoutMs ?? context.reconcileTimeoutMs ?? 0;
    await Promise.all(
      Array.from({ length: workers }, () =>
        this.#worker({
          queue,
          lister: primary.lister,
          resource,
          ownWrites,
          metrics,
          log,
          signal,
          abortReconciles: context.abortReconciles ?? NEVER,
          timeoutMs,
          shards,
        }),
      ),
    );
    log.info('all workers finished');
  }

  async #worker(worker: Worker<T>): Promise<void> {
    const { queue, signal } = worker;
    for (;;) {
      const item = queue.tryGet() ?? (await queue.get());
      if (item.shutdown) return;
      // A shut-down queue still hands out the keys it holds (client-go semantics); reconciling that
      // backlog would stretch shutdown towards its bound. Stop intake: finish only what is in hand.
      if (signal.aborted) {
        queue.done(item.key);
        return;
      }
      if (worker.shards !== undefined && !worker.shards.begin(item.key)) {
        queue.forget(item.key);
        queue.done(item.key);
        worker.log.debug('dropped a key whose bucket this replica no longer holds', { key: item.key });
        continue;
      }
      let outcome: ReconcileOutcome | undefined;
      try {
        outcome = await this.#reconcileKey(item.key, item.priority, worker);
      } finally {
        worker.shards?.end(item.key, outcome !== undefined && REQUEUED.has(outcome));
        queue.done(item.key);
      }
    }
  }

  /** Reconciles `key`; a requeue adds it back at `priority`, the priority it was handed out with. */
  async #reconcileKey(
    key: string,
    priority: number,
    {
      queue,
      lister,
      resource,
      ownWrites,
      metrics,
      log: controllerLog,
      abortReconciles,
      timeoutMs,
    }: Worker<T>,
  ): Promise<ReconcileOutcome> {
    const { namespace, name } = splitKey(key);
    const object = ownWrites.latest(key, lister.get(namespace, name));
    const status = ownStatusWriter(
      resource,
      ownWrites,
      key,
      namespace === undefined ? { name } : { namespace, name },
      object,
      () => lister.get(namespace, name)?.metadata?.resourceVersion,
    );
    const reconcileID = randomUUID();
    const log = controllerLog.child({ namespace, name, reconcileID });
    const started = performance.now();
    metrics?.reconcileStarted();
    // controller-runtime's V(5) "Reconciling"/"Reconcile successful": at debug, each reconcile's start
    // and end with its reconcileID, so that logs show who reconciled what when (a sharded hand-off's
    // "never two at once" is checked from these).
    // Checked first: winston builds and pipes a record for every call, whatever the level, and this
    // runs for every reconcile.
    const debug = log.isDebugEnabled();
    if (debug) log.debug('reconciling');
    const deadline = reconcileDeadline(abortReconciles, timeoutMs, () => {
      metrics?.reconcileTimedOut();
      log.error('reconcile timed out: its signal is aborted; the object waits until it returns', {
        timeoutMs,
      });
    });
    let outcome: ReconcileOutcome;
    try {
      const result = (await this.#options.reconcile({
        key,
        namespace,
        name,
        object,
        status,
        reconcileID,
        log,
        signal: deadline.signal,
      })) as ReconcileResult;
      outcome = applyResult(queue, key, priority, result);
    } catch (error) {
      if (isTerminal(error)) {
        queue.forget(key);
        outcome = 'terminal_error';
        log.error('reconcile failed with a terminal error; not retrying', { error });
      } else if (isPanic(error)) {
        queue.addRateLimited(key, priority);
        outcome = 'panic';
        // An Error is logged with its stack; any other thrown value has none, only its description.
        log.error('observed a panic in the reconciler; retrying with backoff', {
          ...(error instanceof Error ? { error } : { panic: inspect(error) }),
          retries: queue.numRequeues(key),
        });
      } else {
        queue.addRateLimited(key, priority);
        outcome = 'error';
        log.error('reconcile failed; retrying with backoff', { error, retries: queue.numRequeues(key) });
      }
    } finally {
      deadline.clear();
    }
    const seconds = (performance.now() - started) / 1000;
    metrics?.reconcileFinished(outcome, seconds);
    if (debug) log.debug('reconciled', { outcome, seconds });
    return outcome;
  }
}

interface Worker<T extends KubeObject> {
  queue: RateLimitingQueue<string>;
  lister: { get(namespace: string | undefined, name: string): T | undefined };
  resource: Resource<T>;
  ownWrites: OwnWrites<T>;
  metrics: ControllerReconcileMetrics | undefined;
  log: Logger;
  /** Stops intake. */
  signal: AbortSignal;
  /** Aborts in-flight reconciles (see `ControllerContext.abortReconciles`). */
  abortReconciles: AbortSignal;
  /** Each reconcile's timeout; 0: none. */
  timeoutMs: number;
  /** Sharded: which keys this replica may reconcile. */
  shards: ShardFilter | undefined;
}

/** A signal that never aborts: a controller run without `abortReconciles`. */
const NEVER: AbortSignal = new AbortController().signal;

/** The outcomes after which the key is queued again (retry with backoff, or after a delay). */
const REQUEUED: ReadonlySet<ReconcileOutcome> = new Set<ReconcileOutcome>([
  'requeue_after',
  'requeue',
  'error',
  'panic',
]);

/**
 * The primary's handlers without the echoes of the controller's own status writes (see
 * `OwnWrites.isEcho`): the reconcile that wrote acted on that object already. A delete forgets the
 * object's writes.
 */
function withoutEchoes<T extends KubeObject>(
  ownWrites: OwnWrites<T>,
  handlers: EventHandlers<T>,
): EventHandlers<T> {
  return {
    ...handlers,
    onUpdate: (oldObj, newObj) => {
      if (!ownWrites.isEcho(objectKey(newObj), oldObj, newObj)) handlers.onUpdate?.(oldObj, newObj);
    },
    onDelete: (obj, info) => {
      ownWrites.forget(objectKey(obj));
      handlers.onDelete?.(obj, info);
    },
  };
}

function applyResult(
  queue: RateLimitingQueue<string>,
  key: string,
  priority: number,
  result: ReconcileResult,
): ReconcileOutcome {
  const requeuePriority = result?.priority ?? priority;
  if (result?.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
    queue.forget(key);
    queue.addAfter(key, result.requeueAfterMs, requeuePriority);
    return 'requeue_after';
  }
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- honoured until every reconciler has moved off it
  if (result?.requeue === true) {
    queue.addRateLimited(key, requeuePriority);
    return 'requeue';
  }
  queue.forget(key);
  return 'success';
}
