import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import type { KubeClient, Resource } from '@loopwright/client';
import {
  objectKey,
  resourceTypeOf,
  type EventHandlers,
  type HandlerRegistration,
  type KubeObject,
  type SharedInformerFactory,
} from '@loopwright/informer';
import type { ControllerReconcileMetrics, Metrics, ReconcileOutcome } from '@loopwright/metrics';
import { newRateLimitingQueue, type RateLimiter, type RateLimitingQueue } from '@loopwright/workqueue';
import type { Logger } from 'winston';
import { isTerminal } from '../errors/index.ts';
import { OwnWrites } from '../writes/own-writes.ts';
import { ownStatusWriter } from '../writes/status-writer.ts';
import { enqueueFiltered } from './event-handler.ts';
import { enqueueControllerOwner, splitKey } from './mappers.ts';
import { isPanic } from './panic.ts';
import { reconcileDeadline } from './reconcile-deadline.ts';
import { and, type Predicate } from './predicates.ts';
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
  /** The reconcile timeout of a controller that sets none of its own; default 0: no limit. */
  reconcileTimeoutMs?: number;
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
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly #options: ControllerOptions<T>;

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
   * Runs until `context.signal` is aborted, then stops intake (keys still queued are not reconciled)
   * and resolves once every in-flight reconcile has finished (the Manager bounds how long it waits).
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

    const enqueue = (key: string, priority: number): void => {
      queue.add(key, priority);
    };
    const filter = <R extends KubeObject>(own: Predicate<R> | undefined): Predicate<R> =>
      and(...[this.#options.eventFilter, own].filter((p) => p !== undefined));
    const registrations: HandlerRegistration[] = [
      primary.addEventHandler(
        withoutEchoes(
          ownWrites,
          enqueueFiltered(enqueue, (obj) => [objectKey(obj)], filter(this.#options.for.predicate)),
        ),
      ),
    ];
    const { kind, group, namespaced } = this.#options.for;
    const ownerKeys = enqueueControllerOwner(kind, group, namespaced);
    for (const owned of this.#options.owns ?? [])
      registrations.push(
        factory
          .forResource(owned)
          .addEventHandler(enqueueFiltered(enqueue, ownerKeys, filter(owned.predicate))),
      );
    for (const watch of this.#options.watches ?? [])
      registrations.push(
        factory
          .forResource(watch.resource)
          .addEventHandler(enqueueFiltered(enqueue, watch.map, filter(watch.predicate))),
      );

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
        this.#worker({ queue, lister: primary.lister, resource, ownWrites, metrics, log, signal, timeoutMs }),
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
      try {
        await this.#reconcileKey(item.key, item.priority, worker);
      } finally {
        queue.done(item.key);
      }
    }
  }

  /** Reconciles `key`; a requeue adds it back at `priority`, the priority it was handed out with. */
  async #reconcileKey(
    key: string,
    priority: number,
    { queue, lister, resource, ownWrites, metrics, log: controllerLog, signal, timeoutMs }: Worker<T>,
  ): Promise<void> {
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
    const deadline = reconcileDeadline(signal, timeoutMs, () => {
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
    metrics?.reconcileFinished(outcome, (performance.now() - started) / 1000);
  }
}

interface Worker<T extends KubeObject> {
  queue: RateLimitingQueue<string>;
  lister: { get(namespace: string | undefined, name: string): T | undefined };
  resource: Resource<T>;
  ownWrites: OwnWrites<T>;
  metrics: ControllerReconcileMetrics | undefined;
  log: Logger;
  signal: AbortSignal;
  /** Each reconcile's timeout; 0: none. */
  timeoutMs: number;
}

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
