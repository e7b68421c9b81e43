/**
 * One replica's membership in a ring: its member Lease renewed every retry period, and the buckets of
 * the hash space handed off between it and the other members by `planHandoff`, through the holdings
 * annotation of their Leases.
 *
 * Each tick: (a) renew the Lease (renewTime and the current holdings); (b) read the whole ring in one
 * consistent list and plan; (c) drain what to release, then write the holdings without it, and only
 * then may another member take it; (d) write the holdings WITH what to take (the claim), read the ring
 * again, and start only the claimed buckets that no other live member lists.
 *
 * When ticks run: every retry period (jittered), and also at the first moment a member the view knows
 * can be judged expired (its last seen change plus its lease duration). The ring's Leases are watched
 * as well (ring-watch.ts), so a member's renewal is seen when it happens rather than at the next list.
 * A crashed member's buckets are therefore taken a lease duration after its last renewal was seen
 * (through the watch, a few milliseconds after it; through the lists alone, up to a tick after it),
 * plus one claim: a renewal, a list, the claim's write and its list. Before the watch and the wake,
 * that was up to two jittered ticks more (lease + 2 x 1.2 x retry). The watch is only a hint: it
 * moves only WHEN a member was last seen changing, always to the moment of the event, after the write
 * it shows, so it can only make a member look alive longer; what members hold, the plan and the claim's
 * check come from the consistent lists, the fence below. A missing or late event only delays.
 *
 * Why two members never reconcile one bucket at once:
 * - A live member lists every bucket it reconciles, written before it starts one and removed only after
 *   it drained it. Others take only buckets that no live member lists.
 * - A member is judged gone (expired) by another only once that other has seen its Lease unchanged for
 *   its lease duration on its own clock, counted from when it SAW the last change, which is after the
 *   write started. The member itself gives everything up (`lost`) once it could not write for the
 *   renew deadline, counted from the start of its last successful write, and the renew deadline is
 *   shorter than the lease duration: it has stopped before anyone may judge it gone (the rule of leader
 *   election; it assumes clocks that run at about the same rate, never that they agree).
 * - Two members whose views differ (one has seen a member join or expire and the other not yet) can
 *   both find a bucket free and both plan to take it. Each writes its claim before it reads, and the
 *   reads are linearizable (a list without resourceVersion is a quorum read of etcd): of two claims, the
 *   one written second is followed by a read that sees the first, unless the first was already
 *   withdrawn, which its author does only after seeing the second. So at least one of them sees the
 *   other's claim, and whoever sees a conflict backs off (drops the bucket, does not start it). A
 *   tie-break by identity would not be safe: when only one of the two sees the other, the one that does
 *   not see it keeps the bucket, so the one that does must yield whatever the identities. Both may back
 *   off; the bucket is then free for a later tick, when the views agree and only one targets it.
 * - A claim written but not yet checked is never started; if its write or check fails, the next renewal
 *   writes the holdings without it. A claim therefore only ever delays others, never misleads them.
 * - A start may take time (server-side sharding lists the new shard before it queues its keys): it is
 *   awaited while the Lease, which lists the started buckets, is renewed every retry period. A start
 *   still pending at the renew deadline loses the Lease as any failed renewal does, and its signal
 *   aborts, so that it begins nothing afterwards.
 *
 * `run` resolves with how it ended: `'stopped'` after `signal` aborted, everything held was drained and
 * the Lease deleted (the others take the buckets at their next tick); `'lost'` when the Lease could not
 * be renewed in time (or was deleted or taken by another holder): `lost()` was called and the Lease
 * is left to expire; `'halted'` after the tests' `halt`. It never rejects: API failures are logged and
 * retried, as leader election does.
 */
import { isAlreadyExists, isConflict, isNotFound } from '@loopwright/client';
import { deadlineSignal, jitter, realClock, sleep, type Clock, type DeadlineSignal } from '@loopwright/core';
import { consoleLogger, LEASES, type LeaderElectionRecord, type Logger } from '@loopwright/leader-election';
import { assign } from './assignment.ts';
import { planHandoff } from './handoff.ts';
import { formatHoldings } from './holdings.ts';
import { MemberLeases, memberLeaseName, type LeaseObject, type MemberLease } from './member-lease.ts';
import { RingView } from './ring-view.ts';
import { watchRing } from './ring-watch.ts';
import {
  validateSharderOptions,
  type HandoffResult,
  type SharderCallbacks,
  type SharderOptions,
  type ShardingMetricsSink,
} from './sharder-options.ts';
import { fraction, normalizeBuckets } from './space.ts';

/**
 * How far ticks are jittered: `retryPeriod * (1 + 0.2 * random)`, as the elector jitters its standbys'
 * polls (its POLL_JITTER_FACTOR): replicas started together drift apart instead of listing in step.
 */
const TICK_JITTER_FACTOR = 0.2;

/**
 * A crashed member's Lease is deleted by any live member once seen unchanged for this many of its lease
 * durations: a Deployment's replaced pods leave no Lease behind, and a member that was only cut off for
 * a while finds its Lease still there long after it gave everything up.
 */
const GARBAGE_AFTER_LEASE_DURATIONS = 10;

/** Delete attempts on a graceful leave: a conflict (a write cut off by the stop that landed) re-reads. */
const MAX_LEAVE_ATTEMPTS = 3;

/** A function, not `signal.aborted` inline: the signal changes across awaits, which narrowing ignores. */
function aborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

export type SharderExit = 'stopped' | 'lost' | 'halted';

/** How a callback run while renewing ended: settled (with its error, if it rejected), or cut short. */
type RenewedOutcome = { settled: true; error?: unknown } | { settled: false; why: 'lost' | 'halted' };

type DrainOutcome = 'drained' | 'failed' | 'lost' | 'halted';

export class Sharder {
  readonly #identity: string;
  readonly #ring: string;
  readonly #name: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #callbacks: SharderCallbacks;
  readonly #metrics: ShardingMetricsSink | undefined;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #halt: AbortSignal;
  readonly #leases: MemberLeases;
  readonly #view: RingView;

  /** The own Lease as last written or read: the base of the next write. */
  #own: MemberLease | undefined;
  /** A write failed (it may still have landed): take the base from the next read of the ring. */
  #ownStale = false;
  /** Start of the last successful write of the own Lease: the renew deadline counts from here. */
  #renewedAt = 0;
  /**
   * When the last tick started: expiries up to then were planned with, so the wait for the next tick
   * wakes only for later ones (a tick whose read failed is not run again at once).
   */
  #tickedAt = -Infinity;
  /** The buckets started and not drained: listed in every write. */
  readonly #held = new Set<number>();
  /** The member last seen listing each bucket, for the hand-off log. */
  readonly #lastHolder = new Map<number, string>();
  #lost = false;
  #running = false;
  /** The Leases of members judged gone at the last read, so that each judgement is logged once. */
  #judgedGone = new Set<string>();

  constructor(options: SharderOptions) {
    const durations = validateSharderOptions(options);
    this.#leaseDurationMs = durations.leaseDurationMs;
    this.#renewDeadlineMs = durations.renewDeadlineMs;
    this.#retryPeriodMs = durations.retryPeriodMs;
    this.#identity = options.identity;
    this.#ring = options.ring;
    this.#name = memberLeaseName(options.ring, options.identity);
    this.#callbacks = options.callbacks;
    this.#metrics = options.metrics;
    this.#logger = options.logger ?? consoleLogger;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#halt = options.halt ?? new AbortController().signal;
    this.#leases = new MemberLeases(
      options.client.resource<LeaseObject>(LEASES),
      options.namespace,
      options.ring,
    );
    this.#view = new RingView(this.#clock);
  }

  /** Joins the ring, takes part in it until `signal` aborts, leaves it. See the file's comment. */
  async run(signal: AbortSignal): Promise<SharderExit> {
    if (this.#running) throw new Error(`Sharder ${this.#name}: run() is already running`);
    this.#running = true;
    try {
      const stop = AbortSignal.any([signal, this.#halt]);
      if (!(await this.#join(stop))) return this.#halt.aborted ? 'halted' : 'stopped';
      const watching = new AbortController();
      const watched = this.#watchRing(AbortSignal.any([stop, watching.signal]));
      try {
        for (let first = true; ; first = false) {
          if (!first) await this.#untilNextTick(stop);
          if (stop.aborted) break;
          this.#tickedAt = this.#clock.now();
          if (this.#tickedAt >= this.#renewedAt + this.#renewDeadlineMs) {
            this.#lose('no successful write within the renew deadline');
          } else await this.#tick(stop);
          if (this.#lost) return 'lost';
        }
      } finally {
        watching.abort();
        await watched;
      }
      return this.#halt.aborted ? 'halted' : await this.#leave();
    } finally {
      this.#running = false;
    }
  }

  /**
   * Sleeps until the next regular tick (a jittered retry period from now), the renew deadline, or the
   * first moment a member the view knows can be judged expired, whichever comes first. The expiry is
   * read again after each wake: a change the watch delivered meanwhile postpones it.
   */
  async #untilNextTick(stop: AbortSignal): Promise<void> {
    const tickAt = this.#clock.now() + jitter(this.#retryPeriodMs, TICK_JITTER_FACTOR, this.#random);
    for (;;) {
      const expiresAt = this.#view.nextExpiryAt(this.#name, this.#tickedAt) ?? Infinity;
      const wakeAt = Math.min(tickAt, this.#renewedAt + this.#renewDeadlineMs, expiresAt);
      const now = this.#clock.now();
      if (now >= wakeAt || stop.aborted) return;
      await sleep(this.#clock, wakeAt - now, stop);
    }
  }

  /** See ring-watch.ts: the member Leases' changes, seen when they happen; the own Lease's ignored. */
  #watchRing(signal: AbortSignal): Promise<void> {
    const onChange = (lease: MemberLease): void => {
      if (lease.name !== this.#name) this.#view.saw(lease);
    };
    const options = {
      leases: this.#leases,
      clock: this.#clock,
      logger: this.#logger,
      fields: this.#fields(),
    };
    return watchRing({ ...options, onChange, random: this.#random }, signal);
  }

  async #join(stop: AbortSignal): Promise<boolean> {
    while (!stop.aborted) {
      if (await this.#tryJoin(stop)) {
        this.#logger.info('joined the ring', { ...this.#fields(), lease: this.#name });
        return true;
      }
      await sleep(this.#clock, jitter(this.#retryPeriodMs, TICK_JITTER_FACTOR, this.#random), stop);
    }
    return false;
  }

  /**
   * Creates the own Lease holding nothing. One of this name already there, held by this identity or
   * by nobody, is taken over holding nothing: identities are unique per process, so what held it is a
   * previous incarnation of this replica (a restarted container), which is gone.
   */
  async #tryJoin(stop: AbortSignal): Promise<boolean> {
    const startedAt = this.#clock.now();
    const request = deadlineSignal(this.#clock, this.#renewDeadlineMs, stop);
    const wallMicros = this.#wallMicros();
    const record: LeaderElectionRecord = {
      holderIdentity: this.#identity,
      leaseDurationSeconds: this.#leaseDurationMs / 1000,
      acquireTime: wallMicros,
      renewTime: wallMicros,
      leaseTransitions: 0,
    };
    try {
      try {
        this.#own = await this.#leases.create(this.#name, record, '', request.signal);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        const existing = (await this.#leases.list(request.signal)).find(({ name }) => name === this.#name);
        if (existing === undefined) {
          throw new Error(`a Lease named ${this.#name} exists outside ring ${this.#ring}`, { cause: error });
        }
        const holder = existing.record.holderIdentity;
        if (holder !== '' && holder !== this.#identity) {
          throw new Error(`Lease ${this.#name} is held by ${holder}`, { cause: error });
        }
        const transitions = existing.record.leaseTransitions + (holder === this.#identity ? 0 : 1);
        const adopted = { ...record, leaseTransitions: transitions };
        this.#own = await this.#leases.update(existing, adopted, '', request.signal);
      }
      this.#renewedAt = startedAt;
      return true;
    } catch (error) {
      if (!stop.aborted) this.#logger.warn('joining the ring failed', { ...this.#fields(), error });
      return false;
    } finally {
      request.dispose();
    }
  }

  async #tick(stop: AbortSignal): Promise<void> {
    if (this.#ownStale && !(await this.#readRing(stop))) return;
    // a. Renew.
    if (!(await this.#write(this.#held, stop))) return;
    // b. Read the ring and plan.
    if (!(await this.#readRing(stop))) return;
    await this.#collectGarbage(stop);
    const plan = planHandoff({ me: this.#identity, held: [...this.#held], members: this.#view.views() });
    // c. Release, then (d) take.
    if (plan.release.length > 0 && !(await this.#release(plan.release, stop))) return;
    if (plan.take.length > 0 && !stop.aborted && !this.#lost) await this.#take(plan.take, stop);
  }

  /** Drains `buckets` (renewing meanwhile), then writes the holdings without them. */
  async #release(buckets: readonly number[], stop: AbortSignal): Promise<boolean> {
    const startedAt = this.#clock.now();
    const to = this.#targetOwners(buckets);
    const drained = await this.#drainWhileRenewing(buckets);
    if (drained !== 'drained') {
      if (drained === 'failed') this.#observe('failed', buckets.length, startedAt);
      return false;
    }
    for (const bucket of buckets) this.#held.delete(bucket);
    this.#reportOwned();
    if (!(await this.#write(this.#held, stop))) {
      // Drained and no longer reconciled; the next renewal writes them off the Lease.
      this.#observe('failed', buckets.length, startedAt);
      return false;
    }
    const durationMs = this.#clock.now() - startedAt;
    this.#logger.info('released buckets', {
      ...this.#fields(),
      buckets: formatHoldings(buckets),
      to,
      durationMs,
    });
    this.#observe('released', buckets.length, startedAt);
    return true;
  }

  /** Claims `buckets`, checks the claim against a fresh read of the ring, starts what has no conflict. */
  async #take(buckets: readonly number[], stop: AbortSignal): Promise<void> {
    const startedAt = this.#clock.now();
    // An unchecked claim is never started; if it landed, the next renewal withdraws it.
    if (!(await this.#write([...this.#held, ...buckets], stop)) || !(await this.#readRing(stop))) {
      if (!this.#lost && !aborted(stop)) this.#observe('failed', buckets.length, startedAt);
      return;
    }
    const conflicts = this.#conflicts(buckets);
    const winners = buckets.filter((bucket) => !conflicts.has(bucket));
    if (conflicts.size > 0) {
      const lost = [...conflicts.keys()];
      this.#logger.info('another member claimed buckets too: backing off', {
        ...this.#fields(),
        buckets: formatHoldings(lost),
        with: [...new Set([...conflicts.values()].flat())].sort(),
      });
      this.#observe('conflict', lost.length, startedAt);
      // Best effort: a claim left listed only delays the others until the next renewal.
      await this.#write([...this.#held, ...winners], stop);
    }
    if (winners.length === 0 || stop.aborted || this.#lost) return;
    // Held from here: every renewal while the start runs lists them, so nobody else takes them.
    for (const bucket of winners) this.#held.add(bucket);
    this.#reportOwned();
    const started = await this.#startWhileRenewing(winners);
    if (!started.settled) return;
    if ('error' in started) {
      this.#logger.error('the start callback failed', { ...this.#fields(), error: started.error });
    }
    const from = [...new Set(winners.flatMap((bucket) => this.#lastHolder.get(bucket) ?? []))].sort();
    const durationMs = this.#clock.now() - startedAt;
    this.#logger.info('took buckets', {
      ...this.#fields(),
      buckets: formatHoldings(winners),
      from,
      durationMs,
    });
    this.#observe('taken', winners.length, startedAt);
  }

  /** The claimed buckets that another live member lists (all of them for one whose holdings are unreadable). */
  #conflicts(claimed: readonly number[]): Map<number, string[]> {
    const conflicts = new Map<number, string[]>();
    for (const { identity, expired, holdings } of this.#view.views()) {
      if (identity === '' || identity === this.#identity || expired) continue;
      const listed = new Set(holdings ?? claimed);
      for (const bucket of claimed) {
        if (listed.has(bucket)) conflicts.set(bucket, [...(conflicts.get(bucket) ?? []), identity]);
      }
    }
    return conflicts;
  }

  /**
   * Calls `drain` and renews every retry period until it settles, so that a long drain does not let the
   * Lease expire while its buckets are still reconciled.
   */
  async #drainWhileRenewing(buckets: readonly number[]): Promise<DrainOutcome> {
    const outcome = await this.#whileRenewing('draining', () => this.#callbacks.drain(buckets));
    if (!outcome.settled) return outcome.why;
    if (!('error' in outcome)) return 'drained';
    this.#logger.error('draining buckets failed: they stay listed, the drain is tried again', {
      ...this.#fields(),
      buckets: formatHoldings(buckets),
      error: outcome.error,
    });
    return 'failed';
  }

  /**
   * Calls `start` and renews every retry period until it settles: a slow start (server-side sharding
   * lists the new shard first) keeps the Lease, and the buckets it lists, alive. A start still pending
   * at the renew deadline loses the Lease like any renewal that failed; its signal then aborts, so its
   * late completion starts nothing (the Lease may already be judged expired by then).
   */
  async #startWhileRenewing(buckets: readonly number[]): Promise<RenewedOutcome> {
    const cancel = new AbortController();
    const outcome = await this.#whileRenewing('starting', () =>
      this.#callbacks.start(buckets, AbortSignal.any([cancel.signal, this.#halt])),
    );
    if (!outcome.settled) cancel.abort(new Error(`the sharder stopped starting buckets: ${outcome.why}`));
    return outcome;
  }

  /** Runs `work` and renews every retry period until it settles, the Lease is lost or the sharder halted. */
  async #whileRenewing(doing: string, work: () => void | Promise<void>): Promise<RenewedOutcome> {
    let outcome: { error?: unknown } | undefined;
    const settled = new AbortController();
    void (async () => {
      await work();
    })()
      .then(
        () => {
          outcome = {};
        },
        (error: unknown) => {
          outcome = { error };
        },
      )
      .finally(() => {
        settled.abort();
      });
    const wake = AbortSignal.any([settled.signal, this.#halt]);
    // A function: `outcome` changes across awaits, which narrowing ignores.
    const workOutcome = (): { error?: unknown } | undefined => outcome;
    for (;;) {
      const deadlineAt = this.#renewedAt + this.#renewDeadlineMs;
      await sleep(this.#clock, Math.min(this.#retryPeriodMs, deadlineAt - this.#clock.now()), wake);
      const result = workOutcome();
      if (result !== undefined) return { settled: true, ...result };
      if (this.#halt.aborted) return { settled: false, why: 'halted' };
      if (this.#clock.now() >= deadlineAt) {
        this.#lose(`no successful write within the renew deadline while ${doing}`);
        return { settled: false, why: 'lost' };
      }
      // Only a crash stops these renewals: a graceful stop still drains (or finishes starting) first.
      await this.#write(this.#held, this.#halt);
      if (this.#lost) return { settled: false, why: 'lost' };
    }
  }

  /** Writes the own Lease with `buckets` as holdings; every write is a renewal. */
  async #write(buckets: Iterable<number>, stop: AbortSignal): Promise<boolean> {
    const own = this.#own;
    if (own === undefined || stop.aborted) return false;
    const startedAt = this.#clock.now();
    const request = this.#request(stop);
    const record: LeaderElectionRecord = {
      holderIdentity: this.#identity,
      leaseDurationSeconds: this.#leaseDurationMs / 1000,
      acquireTime: own.record.acquireTime,
      renewTime: this.#wallMicros(),
      leaseTransitions: own.record.leaseTransitions,
    };
    try {
      this.#own = await this.#leases.update(own, record, formatHoldings(buckets), request.signal);
      this.#renewedAt = startedAt;
      return true;
    } catch (error) {
      if (isNotFound(error)) {
        // Deleted by a member that judged it gone long ago, or by hand: nothing lists our buckets.
        this.#lose('the member Lease was deleted');
        return false;
      }
      this.#ownStale = true;
      if (!aborted(stop)) {
        const conflict = isConflict(error);
        this.#logger.warn('writing the member Lease failed', { ...this.#fields(), conflict, error });
      }
      return false;
    } finally {
      request.dispose();
    }
  }

  /** One consistent read of the ring into the view; false (logged) when it failed. */
  async #readRing(stop: AbortSignal): Promise<boolean> {
    if (stop.aborted) return false;
    const request = this.#request(stop);
    let leases: MemberLease[];
    try {
      leases = await this.#leases.list(request.signal);
    } catch (error) {
      if (!aborted(stop)) this.#logger.warn('reading the ring failed', { ...this.#fields(), error });
      return false;
    } finally {
      request.dispose();
    }
    this.#view.observe(leases);
    this.#logJudgedGone();
    const mine = leases.find(({ name }) => name === this.#name);
    if (mine === undefined) {
      this.#lose('the member Lease is gone from the ring');
      return false;
    }
    if (mine.record.holderIdentity !== this.#identity) {
      this.#lose(`the member Lease is held by ${JSON.stringify(mine.record.holderIdentity)}`);
      return false;
    }
    if (this.#ownStale) {
      this.#own = mine;
      this.#ownStale = false;
    }
    for (const { identity, holdings } of this.#view.views()) {
      if (identity === this.#identity || identity === '') continue;
      for (const bucket of holdings ?? []) this.#lastHolder.set(bucket, identity);
    }
    this.#metrics?.setMembers(this.#ring, this.#liveMembers().length);
    return true;
  }

  /**
   * Logs each member newly judged gone (its Lease unchanged for its lease duration since this replica
   * saw its last change): the moment its buckets become free, which the hand-off lines that follow
   * (and their lateness) are measured against.
   */
  #logJudgedGone(): void {
    const now = this.#clock.now();
    const gone = new Set<string>();
    for (const lease of this.#view.expiredFor(1, now)) {
      if (lease.name === this.#name || lease.record.holderIdentity === '') continue;
      gone.add(lease.name);
      if (this.#judgedGone.has(lease.name)) continue;
      this.#logger.info('a member is gone: its Lease did not change for its lease duration', {
        ...this.#fields(),
        member: lease.record.holderIdentity,
        lastChangeSeenMsAgo: Math.round(now - (this.#view.changeSeenAt(lease.name) ?? now)),
        buckets: lease.holdings ?? '',
      });
    }
    this.#judgedGone = gone;
  }

  /** Deletes, at the resourceVersion seen, the Leases seen unchanged for ten of their lease durations. */
  async #collectGarbage(stop: AbortSignal): Promise<void> {
    for (const lease of this.#view.expiredFor(GARBAGE_AFTER_LEASE_DURATIONS)) {
      if (lease.name === this.#name || stop.aborted) continue;
      const request = this.#request(stop);
      try {
        await this.#leases.delete(lease, request.signal);
        this.#logger.info('deleted the Lease of a member gone for ten lease durations', {
          ...this.#fields(),
          lease: lease.name,
          holder: lease.record.holderIdentity,
        });
      } catch (error) {
        // A conflict: it changed since (its member is back) or was replaced; the next read tells.
        if (!isConflict(error) && !aborted(stop)) {
          this.#logger.warn('deleting an expired member Lease failed', {
            ...this.#fields(),
            lease: lease.name,
            error,
          });
        }
      } finally {
        request.dispose();
      }
    }
  }

  /** Drains everything held (renewing meanwhile), then deletes the own Lease. */
  async #leave(): Promise<SharderExit> {
    const buckets = normalizeBuckets(this.#held);
    if (buckets.length > 0) {
      const startedAt = this.#clock.now();
      const drained = await this.#drainWhileRenewing(buckets);
      if (drained === 'lost' || drained === 'halted') return drained;
      if (drained === 'failed') {
        this.#observe('failed', buckets.length, startedAt);
        this.#logger.error('left the ring without deleting the member Lease, a drain failed: it expires', {
          ...this.#fields(),
        });
        return 'stopped';
      }
      this.#held.clear();
      this.#reportOwned();
      this.#observe('released', buckets.length, startedAt);
    }
    for (let attempt = 1; ; attempt++) {
      const request = deadlineSignal(this.#clock, this.#renewDeadlineMs, this.#halt);
      try {
        if (this.#ownStale) {
          const mine = (await this.#leases.list(request.signal)).find(({ name }) => name === this.#name);
          if (mine?.record.holderIdentity !== this.#identity) return 'stopped';
          this.#own = mine;
          this.#ownStale = false;
        }
        if (this.#own !== undefined) await this.#leases.delete(this.#own, request.signal);
        this.#logger.info('left the ring', { ...this.#fields(), buckets: formatHoldings(buckets) });
        return 'stopped';
      } catch (error) {
        if (isConflict(error) && attempt < MAX_LEAVE_ATTEMPTS) {
          this.#ownStale = true;
          continue;
        }
        this.#logger.warn('deleting the member Lease failed: it expires', { ...this.#fields(), error });
        return 'stopped';
      } finally {
        request.dispose();
      }
    }
  }

  /** Stops everything at once, once; see `SharderCallbacks.lost`. */
  #lose(reason: string): void {
    if (this.#lost) return;
    this.#lost = true;
    const buckets = normalizeBuckets(this.#held);
    this.#held.clear();
    this.#logger.error('lost the member Lease: stopping every bucket', {
      ...this.#fields(),
      reason,
      buckets: formatHoldings(buckets),
    });
    this.#reportOwned();
    try {
      this.#callbacks.lost();
    } catch (error) {
      this.#logger.error('the lost callback failed', { ...this.#fields(), error });
    }
  }

  /** A request's signal: `stop`, or the renew deadline since the last successful write. */
  #request(stop: AbortSignal): DeadlineSignal {
    return deadlineSignal(this.#clock, this.#renewedAt + this.#renewDeadlineMs - this.#clock.now(), stop);
  }

  /** The identities of the live members as last read, this one included. */
  #liveMembers(): string[] {
    const live = this.#view
      .views()
      .filter(({ identity, expired }) => identity !== '' && (!expired || identity === this.#identity))
      .map(({ identity }) => identity);
    return [...new Set([this.#identity, ...live])];
  }

  /** Who should get each of `buckets` among the live members, for the hand-off log. */
  #targetOwners(buckets: readonly number[]): string[] {
    const owners = new Set<string>();
    for (const [identity, target] of assign(this.#liveMembers())) {
      if (target.some((bucket) => buckets.includes(bucket))) owners.add(identity);
    }
    return [...owners].sort();
  }

  #reportOwned(): void {
    this.#metrics?.setOwnedFraction(this.#ring, fraction(this.#held));
  }

  #observe(result: HandoffResult, buckets: number, startedAt: number): void {
    this.#metrics?.observeHandoff(this.#ring, result, buckets, (this.#clock.now() - startedAt) / 1000);
  }

  #wallMicros(): number {
    return Math.floor(this.#clock.wallTime() * 1000);
  }

  #fields(): Record<string, unknown> {
    return { ring: this.#ring, identity: this.#identity };
  }
}
