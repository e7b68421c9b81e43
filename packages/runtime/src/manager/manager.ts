import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, describeContext, type KubeClientOptions } from '@loopwright/client';
import {
  SharedInformerFactory,
  stripManagedFields,
  type Informer,
  type KubeObject,
} from '@loopwright/informer';
import { LeaderElector, LeaderWorkError, LeaseLock } from '@loopwright/leader-election';
import { createMetrics, type Metrics } from '@loopwright/metrics';
import type { Logger } from 'winston';
import type { Controller } from '../controller/controller.ts';
import { EventRecorder } from '../events/index.ts';
import { Sharder } from '../sharding/sharder.ts';
import { ShardingConfigError, validateSharderOptions } from '../sharding/sharder-options.ts';
import { shardSelector, type ShardField } from '../sharding/space.ts';
import { cacheSyncTimeoutApplies } from './cache-sync.ts';
import { informerMetricsHook } from './informer-metrics.ts';
import { detectShardMode, memberLeaseScope, type ShardMode } from './shard-mode.ts';
import { shardedInformers } from './shard-plan.ts';
import { startServers, type ServerAddress, type StartedServers } from './servers.ts';

export interface LeaderElectionOptions {
  /** Namespace of the Lease; usually the controller's own (POD_NAMESPACE). */
  namespace: string;
  /** Lease name, shared by all replicas of one controller. */
  leaseName: string;
  /** Unique per replica; default `<hostname>_<uuid>` as controller-runtime. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/**
 * Active-active sharding (issue 39): every replica runs its controllers, each reconciling only the
 * objects of the hash buckets it holds, handed off through member Leases (see `Sharder`). Durations as
 * the Sharder's (defaults 15 s, 10 s, 2 s); the identity is the Manager's.
 */
export interface ShardingOptions {
  /** Where the ring's member Leases live: usually the controller's own namespace (POD_NAMESPACE). */
  namespace: string;
  /** The ring's name (a label value), the same in every replica of one controller. */
  ring: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ManagerOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Default: a fresh registry with every standard family, closed when `start` ends. */
  metrics?: Metrics;
  /**
   * Serves /healthz and /readyz, and /metrics unless `metricsServer` is given. Port 0 picks a free one;
   * `false` serves nothing (tests). /readyz answers 200 once this replica has done what its role needs
   * before it could work: its caches synced (no leader election, a warm standby, a leader), or nothing
   * at all for a cold standby waiting for the Lease (see {@link Manager}).
   */
  health?: ServerAddress;
  /** Serves /metrics on an address of its own (controller-runtime's default), or nowhere (`false`). */
  metricsServer?: ServerAddress;
  /** Omit to run without leader election (one replica, or tests). */
  leaderElection?: LeaderElectionOptions;
  /**
   * Run every replica's controllers, each on its share of the objects (see {@link ShardingOptions});
   * replaces leader election, so not with `leaderElection`. Where the API server selects shards
   * (ShardedListAndWatch), each replica caches only its share of the sharded informers; otherwise every
   * replica caches everything and filters in-process (see the README's sharding part). /readyz as
   * without leader election.
   */
  sharding?: ShardingOptions;
  /**
   * With leader election: whether a standby starts its informers and fills its caches while it waits
   * (warm: it takes over without a full list), or only once it wins (cold: less memory while waiting).
   * Default true. Without leader election it changes nothing: the one replica starts its informers at once.
   */
  warmStandby?: boolean;
  /**
   * How long informers may take to list everything before start-up fails. Default 2 min. Time spent
   * waiting only for resources the API server does not serve (a CRD not installed yet) does not count.
   * A cold standby's informers start when it wins the election, and the timeout counts from then.
   */
  cacheSyncTimeoutMs?: number;
  /**
   * Each controller's reconcile timeout unless the controller sets its own (`ControllerOptions`): the
   * reconcile's signal aborts after this long (see `Controller`). Default 0: none.
   */
  reconcileTimeoutMs?: number;
  /** On shutdown, how long in-flight reconciles may take before the manager gives up on them. Default 30 s. */
  gracefulShutdownTimeoutMs?: number;
  /**
   * Client-side limit of each connection to the API server ({@link Manager.client}, informers, leader
   * election: each has a token bucket of its own, as controller-runtime's clients do). Default none
   * (`false`), as controller-runtime since v0.21: the API server's flow control paces the client.
   */
  rateLimit?: { qps: number; burst: number } | false;
  /** This replica's name in Events (`reportingInstance`) and the Lease; default `<hostname>_<uuid>`. */
  identity?: string;
  /**
   * The `fieldManager` of the reconcilers' writes through {@link Manager.client}: the name under which
   * the API server records the fields this controller owns (controller-runtime's
   * `client.WithFieldOwner`), usually the controller's name. Default none: the server derives one from
   * the user agent. Server-side apply needs one (or a `fieldManager` per call).
   */
  fieldManager?: string;
  /**
   * Applied by every informer to each object before it is cached, so what reconcilers and handlers
   * get. Default `stripManagedFields`: controllers never read `metadata.managedFields`, a large share
   * of a small object. `(obj) => obj` keeps objects as the API server sends them; compose to add
   * your own (`(obj) => mine(stripManagedFields(obj))`). See the informer README on what a transform
   * may drop.
   */
  cacheTransform?: (obj: KubeObject) => KubeObject;
}

/** How a standby waits for the Lease: informers running (warm) or not started yet (cold). */
type Standby = 'warm' | 'cold';

/**
 * How {@link Manager.start} ended; `lost-leadership` must end the process with a non-zero status. A
 * sharded Manager ends so too when its member Lease could not be renewed in time: the same duty (stop
 * at once, exit, let the others take over), told apart in the log.
 */
export type ManagerExit = 'stopped' | 'lost-leadership';

export class CacheSyncTimeoutError extends Error {
  override readonly name = 'CacheSyncTimeoutError';
}

/** How long stopping waits for the last Event writes (controller-runtime bounds it by its shutdown). */
const EVENT_FLUSH_TIMEOUT_MS = 5_000;

/**
 * In-flight reconciles outlived `gracefulShutdownTimeoutMs`. They may still be writing, so the Lease is
 * not released (it expires after its duration, once the process has exited), as controller-runtime
 * returns an error instead of releasing when its grace period runs out.
 */
export class GracefulShutdownTimeoutError extends Error {
  override readonly name = 'GracefulShutdownTimeoutError';
}

/**
 * Runs a process's controllers, as controller-runtime's Manager: controllers run only while this
 * replica leads; health and metrics are served throughout.
 *
 * Standbys (with leader election) are warm by default: their informers list and watch from the start,
 * so a new leader reconciles from a full cache without a list (controller-runtime's `EnableWarmup`).
 * A cold standby (`warmStandby: false`) sends no list or watch while it waits: when it wins, it starts
 * its informers, waits for them to sync within `cacheSyncTimeoutMs` (counted from the win), and only
 * then runs its controllers, so it never reconciles from an empty cache. If that sync fails, it
 * releases the Lease at once (it has reconciled nothing, so no work can overlap the next leader's) and
 * `start` rejects {@link CacheSyncTimeoutError}: `runManager` exits 1 and Kubernetes restarts the pod,
 * as after a failed sync at start-up.
 *
 * Readiness (/readyz) says whether this replica is ready for its role, not whether it leads (as
 * controller-runtime's, which never waits for the election): a warm standby once its caches synced; a
 * cold standby at once, since waiting is all it has to do, so its probes never hold a rollout or a
 * PodDisruptionBudget on it; a cold standby that wins turns unready until its caches have synced, as
 * a replica starting without leader election is.
 *
 * Shutdown (the signal given to `start` aborts, e.g. on SIGTERM): controllers stop taking keys,
 * in-flight reconciles get `gracefulShutdownTimeoutMs` to finish, the Lease is released so a standby
 * takes over at once, informers stop, `start` resolves `'stopped'`. If reconciles are still running
 * when the grace period ends, the Lease is kept and `start` rejects {@link GracefulShutdownTimeoutError}.
 * Losing leadership resolves `'lost-leadership'` at once, without waiting for reconciles: the caller
 * must exit (see `runManager`).
 */
export class Manager {
  readonly factory: SharedInformerFactory;
  readonly metrics: Metrics;
  /** For reconcilers' writes: rate-limited, counted in `rest_client_*`, as `fieldManager`. */
  readonly client: KubeClient;
  readonly identity: string;
  readonly #options: ManagerOptions;
  readonly #controllers: Controller[] = [];
  readonly #recorders: EventRecorder[] = [];
  /**
   * Informers list and watch through a client of their own (as controller-runtime's cache has its
   * own clients), so a burst of writes never waits behind a relist or the other way round.
   */
  readonly #informerClient: KubeClient;
  /** What /readyz answers; see the class documentation. */
  #ready = false;
  /** Sharded, server-side mode: the informers cached by shard, each with its field; empty otherwise. */
  #shardedInformers = new Map<Informer<KubeObject>, ShardField>();
  #servers: StartedServers | undefined;

  constructor(options: ManagerOptions) {
    if (options.sharding !== undefined && options.leaderElection !== undefined) {
      throw new ShardingConfigError(
        'sharding and leaderElection exclude each other: a sharded controller runs in every replica, each on its own share; drop leaderElection',
      );
    }
    this.#options = options;
    this.identity = options.identity ?? options.leaderElection?.identity ?? `${hostname()}_${randomUUID()}`;
    this.metrics = options.metrics ?? createMetrics();
    this.client = new KubeClient(options.kubeConfig, {
      ...this.#clientOptions(),
      ...(options.fieldManager === undefined ? {} : { fieldManager: options.fieldManager }),
    });
    this.#informerClient = new KubeClient(options.kubeConfig, this.#clientOptions());
    this.factory = new SharedInformerFactory({
      client: this.#informerClient,
      logger: options.logger.child({ component: 'informer' }),
      metrics: informerMetricsHook(this.metrics.informer),
      transform: options.cacheTransform ?? stripManagedFields,
    });
    // A bad ring name or unsafe durations fail here, at configuration, rather than at `start`.
    if (options.sharding !== undefined) validateSharderOptions(this.#sharderOptions(options.sharding));
  }

  /**
   * An Events recorder for `reportingController` (e.g. `loopwright.dev/at-scheduler`); flushed and
   * closed when the manager stops. It writes through the reconcilers' own client at `background`
   * priority rather than through a client of its own (controller-runtime's choice): only a shared
   * transport knows when a reconcile's request is waiting or on its way, and a burst of Events must
   * never delay the writes the reconciles depend on, neither at the rate limiter nor at the server.
   * Drops are counted in `loopwright_events_dropped_total{cause}`.
   */
  eventRecorder(reportingController: string): EventRecorder {
    const recorder = new EventRecorder({
      client: this.client,
      reportingController,
      reportingInstance: this.identity,
      logger: this.#options.logger.child({ component: 'events' }),
      onDrop: ({ cause }) => {
        this.metrics.events.dropped(cause);
      },
    });
    this.#recorders.push(recorder);
    return recorder;
  }

  /** Adds a controller; only before `start`. Names must be unique (they label metrics). */
  add<T extends KubeObject>(controller: Controller<T>): this {
    if (this.#controllers.some((c) => c.name === controller.name))
      throw new Error(`duplicate controller name ${controller.name}`);
    this.#controllers.push(controller as unknown as Controller);
    return this;
  }

  /** The health server's port, once started. */
  get healthPort(): number | undefined {
    return this.#servers?.probes?.port;
  }

  /** The port of the separate metrics server, once started. */
  get metricsPort(): number | undefined {
    return this.#servers?.metrics?.port;
  }

  async start(signal: AbortSignal): Promise<ManagerExit> {
    const log = this.#options.logger;
    const { context, server, namespace } = describeContext(this.#options.kubeConfig);
    log.info('starting', {
      context,
      server,
      namespace,
      identity: this.identity,
      controllers: this.#controllers.map((c) => c.name),
    });
    await this.#serve();
    let exit: ManagerExit | undefined;
    try {
      for (const controller of this.#controllers) controller.requestInformers(this.factory);
      const election = this.#options.leaderElection;
      const sharding = this.#options.sharding;
      const standby: Standby = this.#options.warmStandby === false ? 'cold' : 'warm';
      // Before any informer starts: in server-side mode the sharded ones must never list everything.
      const mode = sharding === undefined ? undefined : await this.#chooseShardMode(sharding, signal);
      if (signal.aborted) return 'stopped';
      if (election === undefined || standby === 'warm') {
        if (!(await this.#syncCaches(signal))) return 'stopped';
        this.#ready = true;
      }
      const outcome: ManagerExit = election
        ? await this.#runElected(election, standby, signal)
        : sharding
          ? await this.#runSharded(sharding, mode, signal)
          : await this.#runControllers(signal).then(() => 'stopped' as const);
      exit = outcome;
      return outcome;
    } finally {
      // Reconciles have stopped (or were given up on): flush pending Event series, then the rest. The
      // flush is bounded, as an unreachable API server must not hold the process; after a lost
      // leadership nothing waits: the caller must exit at once.
      const flushMs = exit === 'lost-leadership' ? 0 : EVENT_FLUSH_TIMEOUT_MS;
      await Promise.all(this.#recorders.map((recorder) => recorder.close(flushMs)));
      this.factory.stop();
      await this.#informerClient.close();
      await this.client.close();
      await this.#servers?.close();
      if (this.#options.metrics === undefined) this.metrics.close();
    }
  }

  async #serve(): Promise<void> {
    const log = this.#options.logger;
    const { health = { port: 8080 }, metricsServer } = this.#options;
    const servers = await startServers(
      { health, metricsServer },
      { registry: this.metrics.registry, isReady: () => this.#ready },
    );
    this.#servers = servers;
    if (servers.probes) {
      log.info(`serving ${metricsServer === undefined ? '/metrics, ' : ''}/healthz and /readyz`, {
        port: servers.probes.port,
      });
    }
    if (servers.metrics) log.info('serving /metrics', { port: servers.metrics.port });
  }

  /** Starts the informers and waits for them to sync; false when `signal` aborted first. */
  async #syncCaches(signal: AbortSignal): Promise<boolean> {
    this.factory.start();
    await this.#waitForCacheSync(signal);
    if (signal.aborted) return false;
    this.#options.logger.info('caches synced');
    return true;
  }

  /**
   * Waits for every cache; a timeout window in which only caches of missing resources were pending
   * starts over instead of failing (see {@link cacheSyncTimeoutApplies}).
   */
  async #waitForCacheSync(signal: AbortSignal): Promise<void> {
    const timeoutMs = this.#options.cacheSyncTimeoutMs ?? 120_000;
    for (;;) {
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        await this.factory.waitForCacheSync(AbortSignal.any([signal, timeout]));
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (!timeout.aborted) throw error;
        const pending = this.factory.unsyncedInformers();
        if (cacheSyncTimeoutApplies(pending)) {
          const resources = pending.map((informer) => informer.resource).join(', ');
          throw new CacheSyncTimeoutError(
            `informer caches did not sync within ${timeoutMs} ms: ${resources}`,
            { cause: error },
          );
        }
      }
    }
  }

  async #runElected(
    election: LeaderElectionOptions,
    standby: Standby,
    signal: AbortSignal,
  ): Promise<ManagerExit> {
    const log = this.#options.logger;
    const identity = this.identity;
    const lease = `${election.namespace}/${election.leaseName}`;
    // Set from the elector's callback, which the compiler cannot follow.
    const leadership = { started: false };
    let abandonWork: ((error: unknown) => void) | undefined;
    const shutdownTimedOut = new Promise<never>((_resolve, reject) => {
      abandonWork = reject;
    });
    // After a lost leadership `start` has already returned when the abandoned work times out: that late
    // rejection is for nobody, and must not become an unhandled one.
    shutdownTimedOut.catch(() => undefined);
    // The Lease gets a client of its own (controller-runtime's leader election has its own): renewals
    // never wait for a token behind reconciles' writes.
    const leaseClient = new KubeClient(this.#options.kubeConfig, this.#clientOptions());
    const elector = new LeaderElector({
      lock: new LeaseLock({
        client: leaseClient,
        namespace: election.namespace,
        name: election.leaseName,
        identity,
      }),
      ...(election.leaseDurationMs === undefined ? {} : { leaseDurationMs: election.leaseDurationMs }),
      ...(election.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: election.renewDeadlineMs }),
      ...(election.retryPeriodMs === undefined ? {} : { retryPeriodMs: election.retryPeriodMs }),
      releaseOnCancel: true,
      name: election.leaseName,
      metrics: this.metrics.leaderElection,
      logger: log.child({ component: 'leader-election' }),
      callbacks: {
        onStartedLeading: async (leading) => {
          leadership.started = true;
          log.info('started leading', { lease, identity, standby });
          if (standby === 'cold') {
            this.#ready = false;
            log.info('starting informers now that this cold standby leads');
            // A failed sync rejects this work: the elector releases the Lease and `run` rejects.
            if (!(await this.#syncCaches(leading))) return;
            this.#ready = true;
          }
          return this.#runControllers(leading, { mustStop: takenAway(leading, signal) }).catch(
            (error: unknown) => {
              // Reconciles are still running: the elector must not see the work as settled, since it
              // would then release the Lease and a standby would start while they still write.
              abandonWork?.(error);
              return new Promise<never>(() => undefined);
            },
          );
        },
        onStoppedLeading: () => log.info('stopped leading', { identity }),
        onNewLeader: (leader) => log.info('new leader observed', { leader }),
      },
    });
    if (standby === 'cold') {
      // Nothing to sync before it leads: see the class documentation on readiness.
      this.#ready = true;
      log.info('waiting for leadership as a cold standby: informers start only once this replica leads', {
        lease,
        identity,
        standby,
      });
    } else {
      log.info('waiting for leadership as a warm standby: caches synced and kept current', {
        lease,
        identity,
        standby,
      });
    }
    try {
      await Promise.race([elector.run(signal), shutdownTimedOut]);
    } catch (error) {
      // A cold leader's caches did not sync: the elector has released the Lease, and the caller gets the
      // sync's own error rather than the elector's wrapper.
      if (error instanceof LeaderWorkError && error.cause instanceof CacheSyncTimeoutError) throw error.cause;
      throw error;
    } finally {
      await leaseClient.close();
    }
    if (leadership.started && !signal.aborted) {
      log.error('leadership lost; exiting so that no work overlaps the new leader');
      return 'lost-leadership';
    }
    return 'stopped';
  }

  /** The Sharder's options but its client and callbacks (validated by the constructor). */
  #sharderOptions(sharding: ShardingOptions) {
    return {
      namespace: sharding.namespace,
      ring: sharding.ring,
      identity: this.identity,
      ...(sharding.leaseDurationMs === undefined ? {} : { leaseDurationMs: sharding.leaseDurationMs }),
      ...(sharding.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: sharding.renewDeadlineMs }),
      ...(sharding.retryPeriodMs === undefined ? {} : { retryPeriodMs: sharding.retryPeriodMs }),
      client: this.client,
      callbacks: { start: () => undefined, drain: () => Promise.resolve(), lost: () => undefined },
    };
  }

  /**
   * Decides, once per run, whether the sharded informers select their shard server-side (see
   * {@link detectShardMode}) and logs which mode is in use and why. Server-side, each sharded informer
   * starts selecting nothing: holding no bucket, it syncs at once, empty, and sends no list or watch
   * until the Sharder hands it buckets (the API has no selector that matches nothing).
   */
  async #chooseShardMode(sharding: ShardingOptions, signal: AbortSignal): Promise<ShardMode> {
    const sharded = shardedInformers(this.#controllers.flatMap((c) => c.shardNeeds(this.factory)));
    const scopes = new Map(this.factory.scopes().map(({ scope, informer }) => [informer, scope]));
    const probes = [...sharded].flatMap(([informer, field]) => {
      const scope = scopes.get(informer);
      return scope === undefined ? [] : [{ scope, field }];
    });
    const gate = memberLeaseScope(sharding.namespace, sharding.ring);
    const mode = await detectShardMode(this.#informerClient, { gate, probes }, signal);
    const fields = { ring: sharding.ring, namespace: sharding.namespace, identity: this.identity };
    if (mode.kind === 'server-side') {
      this.#shardedInformers = sharded;
      for (const informer of sharded.keys()) {
        // Resolves once the informer has started; its sync is what the Manager waits for.
        informer.rescope(undefined).catch(() => undefined);
      }
      this.#options.logger.info(
        'running sharded: server-side shard selectors: each replica caches only its share',
        {
          ...fields,
          reason: mode.reason,
          sharded: probes.map(({ scope, field }) => ({ resource: scope.plural, field })),
        },
      );
    } else {
      this.#options.logger.info(
        'running sharded: in-replica filtering: every replica caches everything, reconciles only its share',
        { ...fields, reason: mode.reason },
      );
    }
    return mode;
  }

  /**
   * Re-scopes every sharded informer to `holdings` (server-side mode; nothing otherwise); resolves once
   * each has listed its new shard.
   */
  async #rescope(holdings: ReadonlySet<number>, signal?: AbortSignal): Promise<void> {
    await Promise.all(
      [...this.#shardedInformers].map(([informer, field]) =>
        informer.rescope(shardSelector(field, holdings), signal),
      ),
    );
  }

  /**
   * Sharded: the controllers run from the start holding nothing, the Sharder beside them hands them
   * buckets (`startBuckets`, `drainBuckets`). On `signal` the controllers stop taking keys while the
   * Sharder drains everything (in-flight reconciles finish) and deletes its Lease, so the others take
   * over at their next tick. A lost member Lease stops every controller at once and resolves
   * `'lost-leadership'` without waiting. Reconciles outliving the grace period: the Sharder is halted
   * (its Lease left to expire, as the elected Manager keeps its Lease) and `start` rejects.
   */
  async #runSharded(
    sharding: ShardingOptions,
    mode: ShardMode | undefined,
    signal: AbortSignal,
  ): Promise<ManagerExit> {
    const log = this.#options.logger;
    const controllers = this.#controllers;
    const lost = new AbortController();
    const halt = new AbortController();
    /** The buckets started and not drained: what the sharded informers select (server-side mode). */
    const holdings = new Set<number>();
    const serverSide = mode?.kind === 'server-side';
    const running = this.#runControllers(AbortSignal.any([signal, lost.signal]), {
      sharded: true,
      mustStop: lost.signal,
    });
    // After a lost Lease nobody awaits `running`: its late rejection must not become an unhandled one.
    running.catch(() => undefined);
    const shutdownTimedOut = running.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => {
        halt.abort();
        throw error;
      },
    );
    shutdownTimedOut.catch(() => undefined);
    // The member Lease gets a client of its own, as the elector's: renewals never queue behind reconciles.
    const leaseClient = new KubeClient(this.#options.kubeConfig, this.#clientOptions());
    const sharder = new Sharder({
      ...this.#sharderOptions(sharding),
      client: leaseClient,
      halt: halt.signal,
      metrics: this.metrics.sharding,
      logger: log.child({ component: 'sharding' }),
      callbacks: {
        // Server-side: the caches list the new shard first, so that the objects queued below are there
        // (the hand-off rule holds across the re-list: the buckets are claimed and checked already).
        // The re-list's adds arrive before the buckets are held: the filter drops them, and
        // `startBuckets` queues every cached object of the buckets once.
        start: async (buckets, started) => {
          for (const bucket of buckets) holdings.add(bucket);
          if (serverSide) await this.#rescope(holdings, started);
          if (started.aborted) return;
          for (const controller of controllers) controller.startBuckets(buckets);
        },
        // Server-side: once drained, the caches narrow to what is still held, without waiting (objects
        // left over meanwhile are harmless). The re-list's deletes for the objects that left arrive for
        // buckets no longer held: the filter drops them, so no controller takes them for deletions.
        drain: async (buckets) => {
          await Promise.all(controllers.map((controller) => controller.drainBuckets(buckets)));
          for (const bucket of buckets) holdings.delete(bucket);
          if (serverSide) {
            this.#rescope(holdings).catch((error: unknown) => {
              log.debug('narrowing the caches to the buckets still held failed', { error });
            });
          }
        },
        lost: () => {
          lost.abort();
        },
      },
    });
    let exit: Awaited<ReturnType<Sharder['run']>>;
    try {
      exit = await Promise.race([sharder.run(signal), shutdownTimedOut]);
    } finally {
      await leaseClient.close();
    }
    if (exit === 'lost' && !signal.aborted) {
      log.error('the shard member Lease was lost; exiting so that no work overlaps its next holder');
      return 'lost-leadership';
    }
    await running;
    return 'stopped';
  }

  /** Every connection to the API server: the configured rate limit, counted in `rest_client_*`. */
  #clientOptions(): KubeClientOptions {
    return { observer: this.metrics.restClient, rateLimit: this.#options.rateLimit ?? false };
  }

  /**
   * Runs every controller until `signal` aborts; then waits for in-flight reconciles, bounded: rejects
   * {@link GracefulShutdownTimeoutError} when they outlive `gracefulShutdownTimeoutMs`. The reconciles'
   * signals abort only when the work must stop at once (`mustStop`: leadership or the member Lease was
   * lost) or when they outlived that timeout; a graceful stop lets the reconciles in hand finish
   * untouched, so a rollout never cuts one between two writes.
   */
  async #runControllers(
    signal: AbortSignal,
    { sharded = false, mustStop }: { sharded?: boolean; mustStop?: AbortSignal } = {},
  ): Promise<void> {
    const { logger, metrics } = { logger: this.#options.logger, metrics: this.metrics };
    const givenUp = new AbortController();
    const abortReconciles = mustStop ? AbortSignal.any([mustStop, givenUp.signal]) : givenUp.signal;
    const running = Promise.all(
      this.#controllers.map((c) =>
        c.run({
          factory: this.factory,
          client: this.client,
          logger,
          metrics,
          signal,
          abortReconciles,
          reconcileTimeoutMs: this.#options.reconcileTimeoutMs ?? 0,
          ...(sharded ? { sharded } : {}),
        }),
      ),
    );
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else
        signal.addEventListener(
          'abort',
          () => {
            resolve();
          },
          { once: true },
        );
    });
    const graceMs = this.#options.gracefulShutdownTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>(
      (resolve) =>
        (timer = setTimeout(() => {
          resolve('timeout');
        }, graceMs)),
    );
    const outcome = await Promise.race([running.then(() => 'drained' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      const error = new GracefulShutdownTimeoutError(
        `in-flight reconciles did not finish within the graceful shutdown timeout of ${graceMs} ms`,
      );
      // Their last chance to stop by themselves before the process exits under them.
      givenUp.abort(error);
      throw error;
    }
  }
}

/**
 * Aborted when `work` aborts while `stop` has not: the work was taken away (a lost Lease), not ended by
 * a shutdown. `stop` is aborted before `work` on a shutdown, since `work` follows it.
 */
function takenAway(work: AbortSignal, stop: AbortSignal): AbortSignal {
  const taken = new AbortController();
  const check = (): void => {
    if (!stop.aborted) taken.abort(work.reason);
  };
  if (work.aborted) check();
  else work.addEventListener('abort', check, { once: true });
  return taken.signal;
}

/** Aborted on the first SIGTERM or SIGINT, which it logs: a process's shutdown signal. */
export function shutdownSignal(logger: Logger): AbortSignal {
  const controller = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      logger.info('shutting down', { signal: sig });
      controller.abort();
    });
  }
  return controller.signal;
}

/**
 * Runs a manager as a process's main loop until `signal` aborts (default: SIGTERM/SIGINT), then shuts
 * it down gracefully (exit 0); lost leadership, a start-up failure or reconciles outliving the graceful
 * shutdown timeout exit 1. Never returns.
 */
export async function runManager(
  manager: Manager,
  logger: Logger,
  signal: AbortSignal = shutdownSignal(logger),
): Promise<never> {
  try {
    const exit = await manager.start(signal);
    process.exit(exit === 'stopped' ? 0 : 1);
  } catch (error) {
    logger.error('manager failed', { error });
    process.exit(1);
  }
}
