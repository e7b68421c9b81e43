import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from '@loopwright/core';
import { FakeClock } from '@loopwright/core/testing';
import type { Logger } from '@loopwright/leader-election';
import { assign } from './assignment.ts';
import { formatHoldings, HOLDINGS_ANNOTATION, parseHoldings } from './holdings.ts';
import { MemoryLeaseStore, type MemoryLeaseApi } from './lease-store.test-support.ts';
import { memberLeaseName, RING_LABEL } from './member-lease.ts';
import { random } from './random.test-support.ts';
import { Sharder, type SharderExit } from './sharder.ts';
import { ShardingConfigError, type HandoffResult, type SharderOptions } from './sharder-options.ts';
import { BUCKETS } from './space.ts';

const RING = 'ctrl';
const NAMESPACE = 'ns';
const LEASE_MS = 15_000;
const RENEW_MS = 10_000;
const RETRY_MS = 2_000;
/** The longest gap between two ticks of one member: a retry period jittered by a fifth. */
const TICK_MS = 1.2 * RETRY_MS;
/** The simulation's resolution: invariants are checked this often, and at every start. */
const STEP_MS = 50;
const ALL = Array.from({ length: BUCKETS }, (_, bucket) => bucket);

interface LogLine {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

/** One replica of the simulated controller: its sharder and what it was told to do. */
interface Replica {
  readonly identity: string;
  readonly api: MemoryLeaseApi;
  /** Buckets started and whose drain has not resolved: reconciles may run for them. */
  readonly active: Set<number>;
  readonly logs: LogLine[];
  readonly handoffs: { result: HandoffResult; buckets: number }[];
  readonly members: number[];
  /** Every owned fraction it reported. */
  readonly owned: number[];
  readonly stop: AbortController;
  readonly halt: AbortController;
  readonly run: Promise<SharderExit>;
  exit: SharderExit | undefined;
  lostCalls: number;
  /** Set when it crashed: a dead process reconciles nothing, whatever it last started. */
  dead: boolean;
  /** How long each drain takes on the fake clock. */
  drainMs: number;
  /** How many of the next drains reject. */
  drainFailures: number;
  /** How long each start takes on the fake clock (server-side sharding lists the shard first). */
  startMs: number;
  /** Starts called and not yet settled. */
  starting: number;
  /** Starts whose signal aborted before they ended: they started nothing. */
  startsCancelled: number;
}

/** Several sharders on one in-memory API and one FakeClock, checked for overlap at every step. */
class Simulation {
  readonly clock = new FakeClock();
  readonly store = new MemoryLeaseStore();
  readonly replicas = new Map<string, Replica>();
  readonly violations: string[] = [];

  constructor() {
    this.store.now = () => this.clock.now();
  }

  join(identity: string, overrides: Partial<SharderOptions> = {}): Replica {
    const api = this.store.api(identity);
    const logs: LogLine[] = [];
    const log =
      (level: string) =>
      (message: string, fields: Record<string, unknown> = {}): void => {
        logs.push({ level, message, fields });
      };
    const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    const stop = new AbortController();
    const halt = new AbortController();
    const active = new Set<number>();
    const handoffs: Replica['handoffs'] = [];
    const members: number[] = [];
    const owned: number[] = [];
    const replica = {
      identity,
      api,
      active,
      logs,
      handoffs,
      members,
      owned,
      stop,
      halt,
    } as Partial<Replica> & Pick<Replica, 'identity' | 'active'>;
    Object.assign(replica, {
      exit: undefined,
      lostCalls: 0,
      dead: false,
      drainMs: 0,
      drainFailures: 0,
      startMs: 0,
      starting: 0,
      startsCancelled: 0,
    });
    const self = replica as Replica;
    const sharder = new Sharder({
      client: api.client(),
      namespace: NAMESPACE,
      ring: RING,
      identity,
      clock: this.clock,
      random: random(identity.length * 7919 + identity.charCodeAt(0)),
      logger,
      halt: halt.signal,
      metrics: {
        setMembers: (_ring, count) => members.push(count),
        setOwnedFraction: (_ring, share) => owned.push(share),
        observeHandoff: (_ring, result, buckets) => handoffs.push({ result, buckets }),
      },
      callbacks: {
        start: async (buckets, signal) => {
          if (self.startMs > 0) {
            self.starting++;
            await sleep(this.clock, self.startMs, signal);
            self.starting--;
            if (signal.aborted) {
              self.startsCancelled++;
              return;
            }
          }
          for (const bucket of buckets) {
            for (const other of this.replicas.values()) {
              if (other !== self && !other.dead && other.active.has(bucket)) {
                this.violations.push(
                  `${identity} started ${bucket} at ${this.clock.now()} while ${other.identity} runs it`,
                );
              }
            }
            if (active.has(bucket)) this.violations.push(`${identity} started ${bucket} twice`);
            active.add(bucket);
          }
        },
        drain: async (buckets) => {
          if (self.drainMs > 0) await sleep(this.clock, self.drainMs);
          if (self.drainFailures > 0) {
            self.drainFailures--;
            throw new Error('injected drain failure');
          }
          for (const bucket of buckets) active.delete(bucket);
        },
        lost: () => {
          self.lostCalls++;
          active.clear();
        },
      },
      ...overrides,
    });
    Object.assign(replica, {
      run: sharder.run(stop.signal).then((exit) => {
        self.exit = exit;
        return exit;
      }),
    });
    this.replicas.set(identity, self);
    return self;
  }

  replica(identity: string): Replica {
    const replica = this.replicas.get(identity);
    assert.ok(replica, identity);
    return replica;
  }

  /** A crash: the run stops dead, nothing drained, the Lease left as it is. */
  crash(identity: string): void {
    const replica = this.replica(identity);
    replica.dead = true;
    replica.halt.abort();
  }

  /** No bucket runs in two live replicas. */
  check(): void {
    const owner = new Map<number, string>();
    for (const replica of this.replicas.values()) {
      if (replica.dead) continue;
      for (const bucket of replica.active) {
        const other = owner.get(bucket);
        if (other !== undefined) this.violations.push(`${bucket} runs in ${other} and ${replica.identity}`);
        owner.set(bucket, replica.identity);
      }
    }
    assert.deepEqual(this.violations, []);
  }

  async runFor(ms: number): Promise<void> {
    for (let elapsed = 0; elapsed < ms; elapsed += STEP_MS) {
      await this.clock.advance(STEP_MS);
      this.check();
    }
  }

  /** Advances until `done`, checking at every step; the time it took. */
  async until(done: () => boolean, limitMs = 120_000): Promise<number> {
    const start = this.clock.now();
    while (!done()) {
      assert.ok(this.clock.now() - start < limitMs, `not done after ${limitMs} ms`);
      await this.clock.advance(STEP_MS);
      this.check();
    }
    return this.clock.now() - start;
  }

  /** Every member runs exactly its `assign` share, and its Lease lists exactly that. */
  converged(members: string[]): boolean {
    const target = assign(members);
    return members.every((identity) => {
      const share = [...(target.get(identity) ?? [])];
      const lease = this.store.get(memberLeaseName(RING, identity));
      return (
        sorted(this.replica(identity).active).join() === share.join() &&
        lease?.metadata?.annotations?.[HOLDINGS_ANNOTATION] === formatHoldings(share)
      );
    });
  }

  listed(identity: string): number[] {
    const text = this.store.get(memberLeaseName(RING, identity))?.metadata?.annotations?.[
      HOLDINGS_ANNOTATION
    ];
    return parseHoldings(text ?? '');
  }

  /** When `identity` last wrote its Lease. */
  lastWrite(identity: string): number {
    const writes = this.store.writes.filter(({ by, operation }) => by === identity && operation !== 'delete');
    return writes.at(-1)?.atMs ?? -1;
  }

  async stopAll(): Promise<void> {
    for (const replica of this.replicas.values()) replica.stop.abort();
    await this.until(() => [...this.replicas.values()].every(({ exit }) => exit !== undefined));
  }
}

function sorted(buckets: Iterable<number>): number[] {
  return [...buckets].sort((a, b) => a - b);
}

/** The buckets that replicas other than `except` run now. */
function runningElsewhere(simulation: Simulation, except: string): Set<number> {
  const started = new Set<number>();
  for (const replica of simulation.replicas.values()) {
    if (replica.identity === except) continue;
    for (const bucket of replica.active) started.add(bucket);
  }
  return started;
}

describe('Sharder', () => {
  it('converges to the assignment with a stable set of members and then moves nothing', async () => {
    const sim = new Simulation();
    const members = ['ctrl-0', 'ctrl-1', 'ctrl-2'];
    for (const identity of members) sim.join(identity);
    await sim.until(() => sim.converged(members), 60_000);
    const writes = sim.store.writes.length;
    const handoffs = members.map((identity) => sim.replica(identity).handoffs.length);
    await sim.runFor(30_000);
    assert.ok(sim.converged(members));
    const shares = members.map((identity) => sim.replica(identity).owned.at(-1) ?? 0);
    assert.equal(
      shares.reduce((sum, share) => sum + share, 0),
      1,
    );
    assert.deepEqual(
      members.map((identity) => sim.replica(identity).handoffs.length),
      handoffs,
    );
    // Renewals only: each member writes about once a retry period.
    const renewals = sim.store.writes.length - writes;
    assert.ok(
      renewals >= (3 * 30_000) / TICK_MS - 3 && renewals <= (3 * 30_000) / RETRY_MS + 3,
      String(renewals),
    );
    for (const identity of members) {
      const lease = sim.store.get(memberLeaseName(RING, identity));
      assert.equal(lease?.metadata?.labels?.[RING_LABEL], RING);
      assert.equal(sim.replica(identity).members.at(-1), 3);
    }
    await sim.stopAll();
    assert.deepEqual(sim.store.names(), []);
  });

  it('gives a joining member its share without ever running a bucket twice', async () => {
    const sim = new Simulation();
    sim.join('a');
    sim.join('b');
    await sim.until(() => sim.converged(['a', 'b']));
    sim.join('c');
    await sim.until(() => sim.converged(['a', 'b', 'c']));
    const c = sim.replica('c');
    assert.ok(c.handoffs.some(({ result }) => result === 'taken'));
    const took = c.logs.filter(({ message }) => message === 'took buckets');
    assert.ok(took.length > 0);
    assert.ok(
      took.every(({ fields }) => Array.isArray(fields.from) && typeof fields.durationMs === 'number'),
    );
    await sim.stopAll();
  });

  it('hands a leaving member buckets over at the next tick, and deletes its Lease', async () => {
    const sim = new Simulation();
    for (const identity of ['a', 'b', 'c']) sim.join(identity);
    await sim.until(() => sim.converged(['a', 'b', 'c']));
    const held = sorted(sim.replica('c').active);
    sim.replica('c').stop.abort();
    assert.equal(await sim.replica('c').run, 'stopped');
    assert.equal(sim.replica('c').active.size, 0);
    assert.equal(sim.store.get(memberLeaseName(RING, 'c')), undefined);
    const left = sim.replica('c').logs.find(({ message }) => message === 'left the ring');
    assert.equal(left?.fields.buckets, formatHoldings(held));

    const takenMs = await sim.until(() => held.every((bucket) => runningElsewhere(sim, 'c').has(bucket)));
    assert.ok(takenMs <= TICK_MS + STEP_MS, `taken after ${takenMs} ms`);
    await sim.until(() => sim.converged(['a', 'b']), 3 * TICK_MS);
    const froms = ['a', 'b'].flatMap((identity) =>
      sim.replica(identity).logs.filter(({ message }) => message === 'took buckets'),
    );
    assert.ok(froms.some(({ fields }) => (fields.from as string[]).includes('c')));
    await sim.stopAll();
  });

  it('takes a crashed member buckets only after a lease duration since it was last seen to write, and deletes its Lease after ten', async () => {
    const sim = new Simulation();
    for (const identity of ['a', 'b', 'c']) sim.join(identity);
    await sim.until(() => sim.converged(['a', 'b', 'c']));
    const held = sorted(sim.replica('c').active);
    sim.crash('c');
    assert.equal(await sim.replica('c').run, 'halted');
    const lastWrite = sim.lastWrite('c');

    const waitedMs = await sim.until(() => held.every((bucket) => runningElsewhere(sim, 'c').has(bucket)));
    const takenAt = sim.clock.now();
    // Seen no earlier than written, so judged expired no earlier than a lease duration after it.
    assert.ok(takenAt - lastWrite >= LEASE_MS, `taken ${takenAt - lastWrite} ms after its last write`);
    assert.ok(
      takenAt - lastWrite <= LEASE_MS + 2 * TICK_MS + STEP_MS,
      `taken ${takenAt - lastWrite} ms after`,
    );
    assert.ok(waitedMs > 0);
    await sim.until(() => sim.converged(['a', 'b']), 3 * TICK_MS);

    const name = memberLeaseName(RING, 'c');
    assert.ok(sim.store.get(name), 'the Lease stays until ten lease durations');
    await sim.until(() => sim.store.get(name) === undefined, 10 * LEASE_MS);
    const deleted = sim.store.writes.find((write) => write.operation === 'delete' && write.name === name);
    assert.ok(deleted && deleted.atMs - lastWrite >= 10 * LEASE_MS);
    assert.ok(['a', 'b'].includes(deleted.by));
    await sim.stopAll();
  });

  it('takes a crashed member buckets exactly a lease duration after the watch showed its last write, in a tick of its own', async () => {
    const sim = new Simulation();
    for (const identity of ['a', 'b', 'c']) sim.join(identity);
    await sim.until(() => sim.converged(['a', 'b', 'c']));
    // Their ticks drift apart; then c crashes just after a renewal that a and b have not listed since.
    await sim.runFor(10_000);
    const c = sim.replica('c');
    const held = sorted(c.active);
    c.api.beforeOperation = (operation) => {
      const now = sim.clock.now();
      if (operation !== 'list' || sim.lastWrite('c') !== now) return;
      if (sim.lastWrite('a') === now || sim.lastWrite('b') === now) return;
      c.api.beforeOperation = undefined;
      sim.crash('c');
    };
    await sim.until(() => c.exit !== undefined);
    assert.equal(c.exit, 'halted');
    // The in-memory watch delivers each write at once: a and b saw c's last write when it happened,
    // where a list would have shown it only at their next ticks.
    const lastWrite = sim.lastWrite('c');
    await sim.until(() => held.every((bucket) => runningElsewhere(sim, 'c').has(bucket)));
    const expiredAt = lastWrite + LEASE_MS;
    for (const identity of ['a', 'b']) {
      const writes = sim.store.writes.filter(({ by }) => by === identity).map(({ atMs }) => atMs);
      const claimedAt = writes.find((atMs) => atMs >= expiredAt);
      // Nothing in the memory store takes time: the tick that claims runs at the expiry itself...
      assert.equal(claimedAt, expiredAt, identity);
      // ...and not at a regular tick, which comes a retry period or more after the one before.
      const before = writes.filter((atMs) => atMs < expiredAt).at(-1) ?? -Infinity;
      assert.ok(
        expiredAt - before < RETRY_MS,
        `${identity}: ${expiredAt - before} ms after its previous tick`,
      );
      // Each survivor says once when it judged c gone, and how long since it saw c's last change.
      const gone = sim.replica(identity).logs.filter(({ message }) => message.startsWith('a member is gone'));
      assert.equal(gone.length, 1, identity);
      const [{ fields }] = gone as [LogLine];
      assert.equal(fields.member, 'c');
      assert.equal(fields.lastChangeSeenMsAgo, LEASE_MS);
      assert.equal(fields.buckets, formatHoldings(held));
    }
    await sim.until(() => sim.converged(['a', 'b']), 3 * TICK_MS);
    await sim.stopAll();
  });

  it('without watch events, still takes a crashed member buckets no sooner than a lease duration after a list showed its last write', async () => {
    const sim = new Simulation();
    for (const identity of ['a', 'b', 'c']) sim.join(identity);
    for (const identity of ['a', 'b']) sim.replica(identity).api.dropWatchEvents = true;
    await sim.until(() => sim.converged(['a', 'b', 'c']));
    const held = sorted(sim.replica('c').active);
    sim.crash('c');
    assert.equal(await sim.replica('c').run, 'halted');
    const lastWrite = sim.lastWrite('c');
    // When each survivor's list first showed that write: its first list after it.
    await sim.until(() => held.every((bucket) => runningElsewhere(sim, 'c').has(bucket)));
    const takenAt = sim.clock.now();
    assert.ok(takenAt - lastWrite >= LEASE_MS, `taken ${takenAt - lastWrite} ms after its last write`);
    // Seen at most a tick late, then acted on at the expiry itself rather than at the next tick.
    assert.ok(takenAt - lastWrite <= LEASE_MS + TICK_MS + STEP_MS, `taken ${takenAt - lastWrite} ms after`);
    await sim.stopAll();
  });

  for (const fault of ['fail', 'hang'] as const) {
    it(`calls lost once and stops everything when renewals ${fault} beyond the renew deadline`, async () => {
      const sim = new Simulation();
      sim.join('a');
      const b = sim.join('b');
      await sim.until(() => sim.converged(['a', 'b']));
      const held = sorted(b.active);
      b.api.faults.update = fault;
      b.api.faults.list = fault;
      const lastWrite = sim.lastWrite('b');
      await sim.until(() => b.exit !== undefined, 2 * RENEW_MS);
      assert.equal(b.exit, 'lost');
      assert.equal(b.lostCalls, 1);
      assert.equal(b.active.size, 0);
      assert.equal(b.owned.at(-1), 0);
      const lostAt = sim.clock.now();
      assert.ok(
        lostAt - lastWrite >= RENEW_MS && lostAt - lastWrite <= RENEW_MS + STEP_MS,
        `${lostAt - lastWrite}`,
      );
      assert.ok(
        b.logs.some(({ level, message }) => level === 'error' && message.startsWith('lost the member Lease')),
      );

      await sim.until(() => held.every((bucket) => sim.replica('a').active.has(bucket)));
      assert.ok(sim.clock.now() - lastWrite >= LEASE_MS);
      assert.ok(sim.store.get(memberLeaseName(RING, 'b')), 'a lost member leaves its Lease to expire');
      await sim.runFor(RENEW_MS);
      assert.equal(b.lostCalls, 1);
      await sim.stopAll();
    });
  }

  it('keeps renewing through a drain longer than the lease, and hands over only once it resolved', async () => {
    const sim = new Simulation();
    const a = sim.join('a');
    await sim.until(() => sim.converged(['a']));
    a.drainMs = 2 * LEASE_MS;
    sim.join('b');
    await sim.until(() => sim.converged(['a', 'b']), 4 * LEASE_MS);
    assert.equal(a.lostCalls, 0);
    const released = a.logs.find(({ message }) => message === 'released buckets');
    assert.ok((released?.fields.durationMs as number) >= 2 * LEASE_MS);
    assert.deepEqual(released?.fields.to, ['b']);
    await sim.stopAll();
  });

  it('keeps renewing through a start longer than the lease, and counts the buckets taken once it resolved', async () => {
    const sim = new Simulation();
    sim.join('a');
    await sim.until(() => sim.converged(['a']));
    const b = sim.join('b');
    b.startMs = 2 * LEASE_MS;
    await sim.until(() => b.starting > 0);
    const claimed = sim.listed('b');
    assert.ok(claimed.length > 0, 'the claim is listed while the start runs');
    await sim.runFor(LEASE_MS + RENEW_MS);
    assert.deepEqual(sim.listed('b'), claimed, 'still listed: renewed, not expired');
    assert.equal(b.active.size, 0, 'nothing reconciled before the start resolved');
    assert.equal(b.handoffs.filter(({ result }) => result === 'taken').length, 0);
    await sim.until(() => sim.converged(['a', 'b']), 4 * LEASE_MS);
    assert.equal(b.lostCalls, 0);
    const took = b.logs.find(({ message }) => message === 'took buckets');
    assert.ok((took?.fields.durationMs as number) >= 2 * LEASE_MS);
    assert.equal(b.startsCancelled, 0);
    await sim.stopAll();
  });

  it('loses the Lease when renewals fail past the renew deadline during a slow start, which then starts nothing', async () => {
    const sim = new Simulation();
    const a = sim.join('a');
    await sim.until(() => sim.converged(['a']));
    const b = sim.join('b');
    b.startMs = 4 * LEASE_MS;
    await sim.until(() => b.starting > 0);
    const claimed = sim.listed('b');
    b.api.faults.update = 'fail';
    b.api.faults.list = 'fail';
    const lastWrite = sim.lastWrite('b');
    await sim.until(() => b.exit !== undefined, 2 * RENEW_MS);
    assert.equal(b.exit, 'lost');
    assert.equal(b.lostCalls, 1);
    const lostAt = sim.clock.now();
    assert.ok(lostAt - lastWrite <= RENEW_MS + STEP_MS, `${lostAt - lastWrite}`);
    assert.equal(b.startsCancelled, 1, "the start's signal aborted");
    assert.ok(b.logs.some(({ message }) => message.startsWith('lost the member Lease')));
    // The others take the claimed buckets once the Lease expired; b never reconciles them.
    await sim.until(() => claimed.every((bucket) => a.active.has(bucket)), 2 * LEASE_MS);
    await sim.runFor(4 * LEASE_MS);
    assert.equal(b.active.size, 0);
    await sim.stopAll();
  });

  it('keeps buckets listed when a drain rejects, and drains them again on a later tick', async () => {
    const sim = new Simulation();
    const a = sim.join('a');
    await sim.until(() => sim.converged(['a']));
    a.drainFailures = 1;
    sim.join('b');
    await sim.until(() => a.handoffs.some(({ result }) => result === 'failed'));
    assert.deepEqual(sim.listed('a'), ALL);
    await sim.until(() => sim.converged(['a', 'b']));
    assert.ok(a.logs.some(({ message }) => message.startsWith('draining buckets failed')));
    await sim.stopAll();
  });

  it('never runs a bucket twice when a member plans from a stale view of the ring (3d)', async () => {
    const sim = new Simulation();
    const a = sim.join('a');
    await sim.until(() => sim.converged(['a']));
    // The ring as a saw it alone: b missing, as if a had not yet seen b join.
    const alone = sim.store.list(`${RING_LABEL}=${RING}`);
    const b = sim.join('b');
    await sim.until(() => sim.converged(['a', 'b']));
    const share = sorted(b.active);
    a.api.serveStaleListOnce(alone);
    // a plans from the stale list: b's share looks free and in a's target; it claims, reads again,
    // sees b listing it, and backs off.
    await sim.until(() => a.handoffs.some(({ result }) => result === 'conflict'), 2 * TICK_MS);
    const conflict = a.logs.find(({ message }) => message.startsWith('another member claimed'));
    assert.ok(conflict);
    assert.equal(conflict.fields.buckets, formatHoldings(share));
    assert.deepEqual(conflict.fields.with, ['b']);
    await sim.runFor(2 * TICK_MS);
    assert.ok(sim.converged(['a', 'b']));
    assert.deepEqual(sim.listed('a'), sorted(a.active));
    await sim.stopAll();
  });

  it('does not start a claimed bucket that another live member listed before the check, and withdraws it', async () => {
    const sim = new Simulation();
    let lists = 0;
    const a = sim.join('a');
    a.api.beforeOperation = (operation) => {
      // The second list of a's first tick is its claim's check: x's claim lands just before it.
      if (operation !== 'list' || ++lists !== 2) return;
      sim.store.create(
        {
          metadata: {
            name: 'x-lease',
            labels: { [RING_LABEL]: RING },
            annotations: { [HOLDINGS_ANNOTATION]: '0-9' },
          },
          spec: { holderIdentity: 'x', leaseDurationSeconds: 15 },
        },
        'x',
      );
    };
    await sim.until(() => a.active.size > 0);
    assert.deepEqual(sorted(a.active), ALL.slice(10));
    await sim.clock.advance(0);
    assert.deepEqual(sim.listed('a'), ALL.slice(10));
    assert.equal(a.handoffs.find(({ result }) => result === 'conflict')?.buckets, 10);
    // x never writes again: a judges it expired after its lease duration, then takes its buckets.
    const createdAt = sim.store.writes.find(({ by }) => by === 'x')?.atMs ?? 0;
    await sim.until(() => a.active.size === BUCKETS);
    assert.ok(sim.clock.now() - createdAt >= LEASE_MS);
    await sim.stopAll();
  });

  it('calls lost when its Lease is deleted under it', async () => {
    const sim = new Simulation();
    const a = sim.join('a');
    await sim.until(() => sim.converged(['a']));
    const lease = sim.store.get(memberLeaseName(RING, 'a'));
    sim.store.delete(memberLeaseName(RING, 'a'), lease?.metadata?.resourceVersion ?? '', 'someone');
    await sim.until(() => a.exit !== undefined, TICK_MS + STEP_MS);
    assert.equal(a.exit, 'lost');
    assert.equal(a.lostCalls, 1);
    assert.equal(a.active.size, 0);
  });

  it('calls lost when the ring shows its Lease held by another identity', async () => {
    const sim = new Simulation();
    const a = sim.join('a');
    await sim.until(() => sim.converged(['a']));
    // A write between a's renewal and its read of the ring.
    a.api.beforeOperation = (operation) => {
      if (operation !== 'list') return;
      const lease = sim.store.get(memberLeaseName(RING, 'a'));
      assert.ok(lease?.spec);
      lease.spec.holderIdentity = 'intruder';
      sim.store.update(lease, 'intruder');
      a.api.beforeOperation = undefined;
    };
    await sim.until(() => a.exit !== undefined, TICK_MS + STEP_MS);
    assert.equal(a.exit, 'lost');
    assert.ok(a.logs.some(({ fields }) => fields.reason === 'the member Lease is held by "intruder"'));
  });

  it('takes over the Lease of a previous incarnation of its identity, and refuses one held by another', async () => {
    const sim = new Simulation();
    const first = sim.join('a');
    await sim.until(() => sim.converged(['a']));
    sim.crash('a');
    await first.run;
    const before = sim.store.get(memberLeaseName(RING, 'a'));
    sim.replicas.delete('a');
    const again = sim.join('a');
    await sim.until(() => sim.converged(['a']), TICK_MS);
    const after = sim.store.get(memberLeaseName(RING, 'a'));
    assert.equal(after?.spec?.leaseTransitions, before?.spec?.leaseTransitions);
    assert.notEqual(after?.spec?.acquireTime, before?.spec?.acquireTime);
    assert.ok(again.logs.some(({ message }) => message === 'joined the ring'));

    // Another identity whose Lease name is taken: it is never adopted.
    const other = new Simulation();
    other.store.create(
      {
        metadata: { name: memberLeaseName(RING, 'b'), labels: { [RING_LABEL]: RING } },
        spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 15 },
      },
      'test',
    );
    const impostor = other.join('b');
    await other.runFor(3 * RETRY_MS);
    assert.equal(impostor.active.size, 0);
    assert.ok(
      impostor.logs.some(
        ({ message, fields }) =>
          message === 'joining the ring failed' && String(fields.error).includes('someone-else'),
      ),
    );
    await other.stopAll();
    await sim.stopAll();
  });

  it('ends a run stopped before it joined without writing anything', async () => {
    const sim = new Simulation();
    const a = sim.join('a');
    a.api.faults.create = 'fail';
    await sim.runFor(3 * RETRY_MS);
    a.stop.abort();
    assert.equal(await a.run, 'stopped');
    assert.deepEqual(sim.store.names(), []);
  });

  it('refuses a second concurrent run', async () => {
    const sim = new Simulation();
    const api = sim.store.api('a');
    const sharder = new Sharder({
      client: api.client(),
      namespace: NAMESPACE,
      ring: RING,
      identity: 'a',
      clock: sim.clock,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      callbacks: { start() {}, drain: () => Promise.resolve(), lost() {} },
    });
    const stop = new AbortController();
    const run = sharder.run(stop.signal);
    await assert.rejects(sharder.run(stop.signal), /already running/);
    stop.abort();
    assert.equal(await run, 'stopped');
  });

  for (const seed of [1, 2, 3]) {
    it(`never runs a bucket twice through random joins, stops, crashes, renew failures and stale views (seed ${seed})`, async (t) => {
      const sim = new Simulation();
      const draw = random(seed);
      const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(draw() * items.length)];
      /** The ring as listed each second: a stale view is one of the last few. */
      const history: ReturnType<MemoryLeaseStore['list']>[] = [];
      const joinedAt = new Map<string, number>();
      let next = 0;
      const join = (): void => {
        const identity = `m-${next++}`;
        joinedAt.set(identity, sim.clock.now());
        sim.join(identity);
      };
      for (let i = 0; i < 3; i++) join();
      const live = (): Replica[] => [...sim.replicas.values()].filter((r) => !r.dead && r.exit === undefined);
      for (let second = 0; second < 300; second++) {
        history.push(sim.store.list(`${RING_LABEL}=${RING}`));
        if (second % 3 === 0) {
          const replica = pick(live());
          const event = draw();
          if (event < 0.2 || live().length < 2) join();
          else if (replica === undefined) continue;
          else if (event < 0.35) replica.stop.abort();
          else if (event < 0.45) sim.crash(replica.identity);
          else if (event < 0.5) {
            // Cut off for a while: it may or may not outlast the renew deadline.
            const api = replica.api;
            api.faults.update = 'fail';
            sim.clock.setTimer(() => delete api.faults.update, draw() * 2 * RENEW_MS);
          } else if ((joinedAt.get(replica.identity) ?? 0) + 12_000 < sim.clock.now()) {
            const stale = history.at(-1 - Math.floor(draw() * 10));
            if (stale !== undefined) replica.api.serveStaleListOnce(stale);
          }
        }
        await sim.runFor(1_000);
      }
      // Quiet: every fault healed, no more events; the survivors converge.
      for (const replica of sim.replicas.values()) delete replica.api.faults.update;
      if (live().length === 0) join();
      await sim.until(() => sim.converged(live().map(({ identity }) => identity)), 20 * LEASE_MS);
      const replicas = [...sim.replicas.values()];
      for (const replica of replicas) assert.ok(replica.lostCalls <= 1, replica.identity);
      const count = (result: HandoffResult): number =>
        replicas.reduce((sum, r) => sum + r.handoffs.filter((h) => h.result === result).length, 0);
      t.diagnostic(
        `${replicas.length} members, ${replicas.filter((r) => r.dead).length} crashed, ` +
          `${replicas.filter((r) => r.exit === 'lost').length} lost; hand-offs: ${count('taken')} taken, ` +
          `${count('released')} released, ${count('conflict')} conflicts, ${count('failed')} failed`,
      );
      await sim.stopAll();
      // Only the Leases of crashed and lost members are left, to expire and be deleted by the others.
      const left = sim.store.names().map((name) => sim.replica(name.slice(RING.length + 1)));
      assert.deepEqual(
        left.filter(({ dead, exit }) => !dead && exit !== 'lost'),
        [],
      );
    });
  }

  describe('configuration', () => {
    const valid: SharderOptions = {
      client: new MemoryLeaseStore().api('a').client(),
      namespace: NAMESPACE,
      ring: RING,
      identity: 'a',
      callbacks: { start() {}, drain: () => Promise.resolve(), lost() {} },
    };
    const refused: [string, Partial<SharderOptions>, RegExp][] = [
      ['an empty namespace', { namespace: '' }, /namespace/],
      ['a ring that is not a label value', { ring: 'my ring' }, /label value/],
      ['a ring longer than 63 characters', { ring: 'r'.repeat(64) }, /label value/],
      ['an empty identity', { identity: '' }, /identity/],
      ['a lease duration in fractions of a second', { leaseDurationMs: 15_500 }, /whole number of seconds/],
      ['a zero retry period', { retryPeriodMs: 0 }, /positive/],
      [
        'a renew deadline not under the lease duration',
        { renewDeadlineMs: 15_000 },
        /greater than renewDeadlineMs/,
      ],
      ['a renew deadline within 1.2 retry periods', { retryPeriodMs: 8_400 }, /1.2 \* retryPeriodMs/],
      [
        'a missing callback',
        { callbacks: { start() {}, lost() {} } as unknown as SharderOptions['callbacks'] },
        /callbacks.drain/,
      ],
    ];
    for (const [what, change, message] of refused) {
      it(`refuses ${what}`, () => {
        assert.throws(
          () => new Sharder({ ...valid, ...change }),
          (error: unknown) => {
            assert.ok(error instanceof ShardingConfigError);
            assert.match(error.message, message);
            return true;
          },
        );
      });
    }

    it('accepts short durations that keep the rules', () => {
      assert.ok(
        new Sharder({ ...valid, leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 500 }),
      );
    });
  });
});
