import { deadlineSignal, jitter, realClock, sleep, type Clock } from '@loopwright/core';
import { LeaderElectionConfigError, LeaderWorkError } from './errors.ts';
import { consoleLogger, errorText, type Logger } from './logger.ts';
import { recordContent, type LeaderElectionRecord, type ResourceLock } from './resource-lock.ts';

/**
 * client-go's `JitterFactor`, 1.2: its standbys poll `wait.Jitter(retryPeriod, 1.2)` apart, 1 to 2.2
 * retry periods. Here it bounds the configuration only (`renewDeadline > JITTER_FACTOR * retryPeriod`,
 * client-go's check), so that a Go candidate sharing the Lease is configured alike.
 */
export const JITTER_FACTOR = 1.2;

/**
 * How far a standby's polls are jittered: `retryPeriod * (1 + 0.2 * random)`. Each poll's lag is part
 * of every failover (a standby counts the lease from when it SAW the last renewal), so it is kept to a
 * fifth of a retry period, where client-go's reaches 1.2; enough to keep standbys from polling in step.
 */
const POLL_JITTER_FACTOR = 0.2;

/** Read-then-update rounds a release tries before giving the lease up to expiry. */
const MAX_RELEASE_ATTEMPTS = 3;

/** What the elector tells its owner. */
export interface LeaderCallbacks {
  /**
   * This candidate became the leader: start the guarded work. `signal` aborts when leadership ends
   * (lost, or `run`'s signal aborted); the work must stop then. If it returns a promise, the elector
   * keeps renewing the lease until it settles, and only then releases it on cancel, so no guarded work
   * overlaps the next leader. A promise that resolves while still leading does not end leadership; one
   * that rejects (or a synchronous throw) before the work was told to stop makes the elector step down
   * and `run` reject with {@link LeaderWorkError}; a rejection after it was told to stop is its stop.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Leadership ended (lost or cancelled). Called once per `onStartedLeading`, after the abort. */
  onStoppedLeading(): void;
  /**
   * The observed holder changed, including to this candidate and to `''` (released). Not called for
   * the initial `''` before anything was observed. Errors are logged and ignored.
   */
  onNewLeader?(identity: string): void;
}

/** Structural hook for `leader_election_master_status{name}`; `@loopwright/metrics`' `LeaderElectionMetrics` fits. */
export interface LeaderElectionMetricsSink {
  /** 1 while leading, 0 otherwise; set to 0 when `run` starts so standbys report too. Must not throw. */
  setLeading(name: string, leading: boolean): void;
}

/** Options of {@link LeaderElector}. Durations in milliseconds, defaults as client-go's. */
export interface LeaderElectorOptions {
  lock: ResourceLock;
  /**
   * How long others wait, after they last saw the record change, before taking the lease; written as
   * `leaseDurationSeconds`, so it must be a whole number of seconds. Default 15 000.
   */
  leaseDurationMs?: number;
  /** The leader gives up if it could not renew for this long since its last successful write. Default 10 000. */
  renewDeadlineMs?: number;
  /**
   * Time between attempts to acquire (jittered up to 1.2 times, and cut short when the observed lease
   * expires) or renew. Default 2 000.
   */
  retryPeriodMs?: number;
  /** On cancel, after the guarded work stopped, write an empty holder with a 1 s lease. Default false. */
  releaseOnCancel?: boolean;
  /** Label for logs and the metric; default the lock's `describe()`. */
  name?: string;
  callbacks: LeaderCallbacks;
  metrics?: LeaderElectionMetricsSink;
  /** Default: info and above to stderr. */
  logger?: Logger;
  /** For tests: time source. Default {@link realClock}. */
  clock?: Clock;
  /** For tests: randomness in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number;
}

type LeadershipOutcome = 'lost' | 'stopped';

/**
 * client-go's `LeaderElector` (tools/leaderelection) over a {@link ResourceLock}.
 *
 * Safety rests on one rule: a lease held by someone else is taken only once WE have seen its record
 * unchanged for its `leaseDurationSeconds` on our own monotonic clock; the holder's `renewTime` is
 * never compared with our clock, so clock skew between nodes cannot cause two leaders. The leader in
 * turn stops its guarded work when it could not renew for `renewDeadlineMs` (< lease duration), so it
 * has stepped down before anyone else may take over.
 */
export class LeaderElector {
  readonly #lock: ResourceLock;
  readonly #identity: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #releaseOnCancel: boolean;
  readonly #name: string;
  readonly #callbacks: LeaderCallbacks;
  readonly #metrics: LeaderElectionMetricsSink | undefined;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #random: () => number;

  /** The record as last read or written, and when (our monotonic clock) its content last changed. */
  #observedRecord: LeaderElectionRecord | undefined;
  #observedContent: string | undefined;
  #observedTime = 0;
  /** Start of the last successful acquire/renew attempt: the renew deadline counts from here. */
  #renewedAt = 0;
  #reportedLeader = '';
  #leading = false;
  #running = false;

  constructor(options: LeaderElectorOptions) {
    this.#leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = options.retryPeriodMs ?? 2_000;
    const problem = leaseDurationsProblem({
      leaseDurationMs: this.#leaseDurationMs,
      renewDeadlineMs: this.#renewDeadlineMs,
      retryPeriodMs: this.#retryPeriodMs,
    });
    if (problem !== undefined) throw new LeaderElectionConfigError(problem);
    // The type system covers TypeScript callers; these catch JavaScript callers and `as any`.
    const callbacks = options.callbacks as Partial<LeaderCallbacks> | undefined;
    if (typeof callbacks?.onStartedLeading !== 'function') {
      throw new LeaderElectionConfigError('callbacks.onStartedLeading must be a function');
    }
    if (typeof callbacks.onStoppedLeading !== 'function') {
      throw new LeaderElectionConfigError('callbacks.onStoppedLeading must be a function');
    }
    this.#lock = options.lock;
    this.#identity = options.lock.identity();
    if (this.#identity === '') throw new LeaderElectionConfigError('the lock identity must not be empty');
    this.#releaseOnCancel = options.releaseOnCancel ?? false;
    this.#name = options.name ?? options.lock.describe();
    this.#callbacks = options.callbacks;
    this.#metrics = options.metrics;
    this.#logger = options.logger ?? consoleLogger;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
  }

  /** True from just before `onStartedLeading` until leadership ends (before `onStoppedLeading`). */
  isLeader(): boolean {
    return this.#leading;
  }

  /** The holder identity last observed in the lock (`''` if none or not read yet). */
  getLeader(): string {
    return this.#observedRecord?.holderIdentity ?? '';
  }

  /**
   * Campaigns until leading, leads until leadership is lost or `signal` aborts, then resolves.
   *
   * - `signal` aborts while waiting: resolves without any callback.
   * - Lost (no renewal within `renewDeadlineMs`, or the lock shows another holder): aborts the work's
   *   signal, calls `onStoppedLeading` and resolves at once, without waiting for the work (a stuck
   *   task must not delay stepping down; the owner is expected to exit, as controller-runtime does).
   * - `signal` aborts while leading: aborts the work's signal, keeps renewing the lease until the work
   *   settles (a renewal failing meanwhile is a loss, as above), releases the lease if
   *   `releaseOnCancel`, calls `onStoppedLeading`, resolves.
   * - The work fails: as on cancel, then rejects with {@link LeaderWorkError}.
   *
   * Lock failures are never thrown: they are logged and retried.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error(`LeaderElector ${this.#name}: run() is already running`);
    this.#running = true;
    try {
      this.#metrics?.setLeading(this.#name, false);
      if (!(await this.#acquire(signal))) return;
      if (signal.aborted) {
        // Acquired just as the caller cancelled: nothing was started, hand the lease back if asked to.
        if (this.#releaseOnCancel) await this.#release();
        return;
      }
      await this.#lead(signal);
    } finally {
      this.#running = false;
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#logger.info('attempting to acquire leader lease', this.#fields());
    while (!signal.aborted) {
      if (await this.#attempt(signal, this.#renewDeadlineMs)) {
        this.#logger.info('successfully acquired lease', this.#fields());
        return true;
      }
      // The next poll, or the moment the lease expires by this candidate's own observation if that
      // comes first (client-go waits for its next poll: up to 2.2 retry periods more per failover). A
      // lease already expired was judged by the attempt that just failed (a conflict, a lock error):
      // the next poll then, never a tight loop.
      const pollMs = jitter(this.#retryPeriodMs, POLL_JITTER_FACTOR, this.#random);
      const untilExpiryMs = this.#untilObservedExpiry();
      const delayMs = untilExpiryMs > 0 ? Math.min(pollMs, untilExpiryMs) : pollMs;
      await sleep(this.#clock, delayMs, signal);
    }
    return false;
  }

  async #lead(signal: AbortSignal): Promise<void> {
    const workController = new AbortController();
    const failed = new AbortController();
    const settled = new AbortController();
    let workFailure: { error: unknown } | undefined;
    this.#setLeading(true);
    (async () => {
      await this.#callbacks.onStartedLeading(workController.signal);
    })()
      .catch((error: unknown) => {
        // Told to stop, work may end by rejecting (with the abort reason, typically): that is the stop.
        if (workController.signal.aborted) {
          this.#logger.debug('guarded work ended by rejecting after it was told to stop', {
            ...this.#fields(),
            error: errorText(error),
          });
          return;
        }
        workFailure = { error };
        this.#logger.error('guarded work failed', { ...this.#fields(), error: errorText(error) });
        failed.abort();
      })
      .finally(() => {
        settled.abort();
      });

    let outcome = await this.#renew(AbortSignal.any([signal, failed.signal]));
    if (outcome === 'stopped') {
      // Cancelled (or the work failed): the work is told to stop, and the lease is renewed until it has
      // settled, so no standby starts while it still runs (controller-runtime, too, cancels its leader
      // election only once its runnables have stopped). Renewal failing meanwhile is a loss, as ever.
      workController.abort(new Error(`leader election ${this.#name} stopped`));
      outcome = await this.#renew(settled.signal);
    }
    if (outcome === 'lost') {
      workController.abort(new Error(`leadership of ${this.#name} lost`));
      this.#setLeading(false);
      this.#logger.error('leader election lost', this.#fields());
      this.#callbacks.onStoppedLeading();
      return;
    }
    this.#setLeading(false);
    if (this.#releaseOnCancel) await this.#release();
    this.#callbacks.onStoppedLeading();
    if (workFailure !== undefined) throw new LeaderWorkError(this.#name, workFailure.error);
  }

  /** Renews every retry period until `stop` aborts ('stopped') or renewal fails for too long ('lost'). */
  async #renew(stop: AbortSignal): Promise<LeadershipOutcome> {
    // A function, not `stop.aborted` inline: the signal changes across awaits, which narrowing ignores.
    const stopped = (): boolean => stop.aborted;
    for (;;) {
      const deadlineAt = this.#renewedAt + this.#renewDeadlineMs;
      await sleep(this.#clock, Math.min(this.#retryPeriodMs, deadlineAt - this.#clock.now()), stop);
      if (stopped()) return 'stopped';
      const remainingMs = deadlineAt - this.#clock.now();
      if (remainingMs <= 0) {
        this.#logger.warn('failed to renew lease within the renew deadline', this.#fields());
        return 'lost';
      }
      // The attempt's requests are cut at the deadline: a hung request must not extend leadership.
      const renewed = await this.#attempt(stop, remainingMs);
      if (stopped()) return 'stopped';
      if (renewed) continue;
      const holder = this.getLeader();
      if (holder !== '' && holder !== this.#identity) {
        // client-go keeps trying until the deadline; another holder in the lock already proves we lost.
        this.#logger.warn('lease taken over by another candidate', { ...this.#fields(), holder });
        return 'lost';
      }
    }
  }

  /** One tryAcquireOrRenew with its requests bounded by `timeoutMs`, then leader-change reporting. */
  async #attempt(parent: AbortSignal, timeoutMs: number): Promise<boolean> {
    const deadline = deadlineSignal(this.#clock, timeoutMs, parent);
    try {
      return await this.#tryAcquireOrRenew(deadline.signal);
    } finally {
      deadline.dispose();
      this.#reportLeaderChange();
    }
  }

  /** client-go's tryAcquireOrRenew: true if this candidate holds the lock after the attempt. */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const startedAt = this.#clock.now();
    const nowMicros = Math.floor(this.#clock.wallTime() * 1000);
    const desired: LeaderElectionRecord = {
      holderIdentity: this.#identity,
      leaseDurationSeconds: this.#leaseDurationMs / 1000,
      acquireTime: nowMicros,
      renewTime: nowMicros,
      leaseTransitions: 0,
    };

    // 1. Fast path: while our own lease is valid, assume the version we last wrote is current.
    const observed = this.#observedRecord;
    if (observed !== undefined && this.#observedHolderIsMe() && this.#observedLeaseValid(startedAt)) {
      const renewal = {
        ...desired,
        acquireTime: observed.acquireTime,
        leaseTransitions: observed.leaseTransitions,
      };
      try {
        await this.#lock.update(renewal, signal);
        this.#observe(renewal);
        this.#renewedAt = startedAt;
        return true;
      } catch (error) {
        this.#logger.debug('optimistic lease update failed, re-reading', {
          ...this.#fields(),
          error: errorText(error),
        });
      }
    }

    // 2. Read the record, or create it.
    let current: LeaderElectionRecord | undefined;
    try {
      current = await this.#lock.get(signal);
    } catch (error) {
      this.#logger.warn('error retrieving lease', { ...this.#fields(), error: errorText(error) });
      return false;
    }
    if (current === undefined) {
      try {
        await this.#lock.create(desired, signal);
      } catch (error) {
        this.#logger.warn('error creating lease', { ...this.#fields(), error: errorText(error) });
        return false;
      }
      this.#observe(desired);
      this.#renewedAt = startedAt;
      return true;
    }

    // 3. Judge expiry by how long WE have seen this content unchanged, never by its renewTime.
    this.#observe(current);
    const expired = this.#observedTime + current.leaseDurationSeconds * 1000 <= startedAt;
    const heldByMe = current.holderIdentity === this.#identity;
    if (current.holderIdentity !== '' && !heldByMe && !expired) {
      this.#logger.debug('lease is held by another candidate and has not expired', {
        ...this.#fields(),
        holder: current.holderIdentity,
      });
      return false;
    }

    // 4. Take over (a new holder counts a transition) or renew through the slow path.
    const next = heldByMe
      ? { ...desired, acquireTime: current.acquireTime, leaseTransitions: current.leaseTransitions }
      : { ...desired, leaseTransitions: current.leaseTransitions + 1 };
    try {
      await this.#lock.update(next, signal);
    } catch (error) {
      this.#logger.warn('failed to update lease', { ...this.#fields(), error: errorText(error) });
      return false;
    }
    this.#observe(next);
    this.#renewedAt = startedAt;
    return true;
  }

  /**
   * client-go's release: an empty holder and a 1 s lease, so standbys take over at their next attempt.
   * It re-reads the lock first, as client-go does since 1.34: a renew that the cancel cut off may still
   * have reached the server, so the version we last wrote can be stale, and an update from it would
   * conflict and leave the lease held for its whole duration. A conflict is retried (client-go 1.37),
   * within the renew deadline. A lease that is no longer ours is left alone, never clobbered.
   */
  async #release(): Promise<void> {
    if (this.#observedRecord === undefined || !this.#observedHolderIsMe()) return;
    // The caller's signal is already aborted; the release gets its own deadline.
    const deadline = deadlineSignal(this.#clock, this.#renewDeadlineMs, new AbortController().signal);
    try {
      for (let attempt = 1; ; attempt++) {
        const current = await this.#lock.get(deadline.signal);
        if (current?.holderIdentity !== this.#identity) {
          this.#logger.info('lease no longer held by this candidate; nothing to release', this.#fields());
          return;
        }
        const nowMicros = Math.floor(this.#clock.wallTime() * 1000);
        const released: LeaderElectionRecord = {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: nowMicros,
          renewTime: nowMicros,
          leaseTransitions: current.leaseTransitions,
        };
        try {
          await this.#lock.update(released, deadline.signal);
        } catch (error) {
          // Someone wrote between our read and our update (or the update failed): read again.
          if (attempt < MAX_RELEASE_ATTEMPTS && !deadline.signal.aborted) continue;
          throw error;
        }
        this.#observe(released);
        this.#logger.info('released lease', this.#fields());
        return;
      }
    } catch (error) {
      this.#logger.warn('failed to release lease', { ...this.#fields(), error: errorText(error) });
    } finally {
      deadline.dispose();
    }
  }

  /** Records `record` as observed; the observation time moves only when its content changed. */
  #observe(record: LeaderElectionRecord): void {
    const content = recordContent(record);
    this.#observedRecord = record;
    if (content !== this.#observedContent) {
      this.#observedContent = content;
      this.#observedTime = this.#clock.now();
    }
  }

  #observedHolderIsMe(): boolean {
    return this.#observedRecord?.holderIdentity === this.#identity;
  }

  /** Time left until another holder's lease expires as observed here; Infinity when nobody else holds it. */
  #untilObservedExpiry(): number {
    const holder = this.#observedRecord?.holderIdentity ?? '';
    if (holder === '' || holder === this.#identity) return Infinity;
    const durationMs = (this.#observedRecord?.leaseDurationSeconds ?? 0) * 1000;
    return this.#observedTime + durationMs - this.#clock.now();
  }

  #observedLeaseValid(now: number): boolean {
    const durationMs = (this.#observedRecord?.leaseDurationSeconds ?? 0) * 1000;
    return this.#observedTime + durationMs > now;
  }

  #reportLeaderChange(): void {
    const holder = this.getLeader();
    if (holder === this.#reportedLeader) return;
    this.#reportedLeader = holder;
    if (holder !== '') this.#logger.info('new leader observed', { ...this.#fields(), holder });
    try {
      this.#callbacks.onNewLeader?.(holder);
    } catch (error) {
      this.#logger.error('onNewLeader callback failed', { ...this.#fields(), error: errorText(error) });
    }
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    this.#metrics?.setLeading(this.#name, leading);
  }

  #fields(): Record<string, unknown> {
    return { lease: this.#name, identity: this.#identity };
  }
}

/**
 * What is wrong with a lease's durations, as client-go checks them, or `undefined`: positive; the lease
 * a whole number of seconds (the Lease stores `leaseDurationSeconds`); the lease longer than the renew
 * deadline; the renew deadline longer than {@link JITTER_FACTOR} retry periods. Shared by everything that
 * renews a Lease on these rules (leader election, shard ring membership).
 */
export function leaseDurationsProblem(durations: {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}): string | undefined {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = durations;
  for (const [name, value] of Object.entries(durations)) {
    if (!Number.isFinite(value) || value <= 0)
      return `${name} must be a positive number of milliseconds, got ${value}`;
  }
  if (leaseDurationMs % 1000 !== 0) {
    return `leaseDurationMs must be a whole number of seconds (the Lease stores leaseDurationSeconds), got ${leaseDurationMs}`;
  }
  if (leaseDurationMs <= renewDeadlineMs) {
    return `leaseDurationMs (${leaseDurationMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`;
  }
  if (renewDeadlineMs <= JITTER_FACTOR * retryPeriodMs) {
    return `renewDeadlineMs (${renewDeadlineMs}) must be greater than ${JITTER_FACTOR} * retryPeriodMs (${JITTER_FACTOR * retryPeriodMs})`;
  }
  return undefined;
}
