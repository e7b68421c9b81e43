import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '@loopwright/core/testing';
import { LeaderElector, type LeaderElectorOptions } from './elector.ts';
import { LeaderElectionConfigError, LeaderWorkError } from './errors.ts';
import type { Logger } from './logger.ts';
import type { LeaderElectionRecord } from './resource-lock.ts';
import { MemoryLeaseStore, MemoryLock } from './memory-lock.test-support.ts';

const silent: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

interface Candidate {
  elector: LeaderElector;
  lock: MemoryLock;
  /** Callback and metric calls in order, e.g. `started`, `stopped`, `leader:b`, `metric:1`. */
  events: string[];
  /** The signal handed to the latest onStartedLeading. */
  workSignal: AbortSignal | undefined;
  controller: AbortController;
  /** `run()`'s outcome; never rejects ('resolved' or the error). */
  done: Promise<unknown>;
  settled: () => boolean;
}

function startCandidate(
  clock: FakeClock,
  store: MemoryLeaseStore,
  identity: string,
  overrides: Partial<LeaderElectorOptions> = {},
): Candidate {
  const lock = new MemoryLock(store, identity);
  const events: string[] = [];
  const controller = new AbortController();
  const candidate: Partial<Candidate> = { lock, events, controller, workSignal: undefined };
  const elector = new LeaderElector({
    lock,
    clock,
    logger: silent,
    random: () => 0,
    callbacks: {
      onStartedLeading: (signal) => {
        candidate.workSignal = signal;
        events.push('started');
      },
      onStoppedLeading: () => events.push('stopped'),
      onNewLeader: (holder) => events.push(`leader:${holder}`),
    },
    metrics: { setLeading: (_name, leading) => events.push(`metric:${leading ? 1 : 0}`) },
    ...overrides,
  });
  let isSettled = false;
  candidate.elector = elector;
  candidate.done = elector.run(controller.signal).then(
    () => 'resolved',
    (error: unknown) => error,
  );
  void candidate.done.finally(() => (isSettled = true));
  candidate.settled = () => isSettled;
  return candidate as Candidate;
}

function record(fields: Partial<LeaderElectionRecord>): LeaderElectionRecord {
  return {
    holderIdentity: '',
    leaseDurationSeconds: 15,
    acquireTime: 1,
    renewTime: 1,
    leaseTransitions: 0,
    ...fields,
  };
}

/** A holder outside the test that renews (rewrites renewTime) every `periodMs` until stopped. */
function renewingHolder(
  clock: FakeClock,
  store: MemoryLeaseStore,
  identity: string,
  periodMs: number,
): () => void {
  let stopped = false;
  const renew = (): void => {
    if (stopped) return;
    store.put(record({ holderIdentity: identity, renewTime: clock.wallTime() * 1000 }), identity);
    clock.setTimer(renew, periodMs);
  };
  renew();
  return () => (stopped = true);
}

describe('LeaderElector: acquiring', () => {
  it('creates an absent lease and leads at once', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(0);

    assert.equal(a.elector.isLeader(), true);
    assert.equal(a.elector.getLeader(), 'a');
    assert.deepEqual(a.events, ['metric:0', 'leader:a', 'metric:1', 'started']);
    const now = clock.wallTime() * 1000;
    assert.deepEqual(store.record, {
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    });
    a.controller.abort();
    await a.done;
  });

  it('takes a released lease (empty holder) at once and counts a transition', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put(record({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 4 }));
    const a = startCandidate(clock, store, 'a');
    await clock.advance(0);

    assert.equal(a.elector.isLeader(), true);
    assert.equal(store.record?.holderIdentity, 'a');
    assert.equal(store.record.leaseTransitions, 5);
    assert.equal(store.record.leaseDurationSeconds, 15);
    a.controller.abort();
    await a.done;
  });

  it('waits as long as the holder keeps changing the record, however long', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    renewingHolder(clock, store, 'other', 2_000);
    const a = startCandidate(clock, store, 'a');
    await clock.advance(120_000);

    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.elector.getLeader(), 'other');
    assert.deepEqual(a.events, ['metric:0', 'leader:other'], 'onNewLeader fires once per holder change');
    assert.ok(store.writes.every((write) => write.by === 'other'));
    a.controller.abort();
    assert.equal(await a.done, 'resolved');
    assert.deepEqual(
      a.events,
      ['metric:0', 'leader:other'],
      'no leading callbacks when cancelled while waiting',
    );
  });

  it('takes over once the record was unchanged for leaseDurationSeconds on the local clock', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const stopHolder = renewingHolder(clock, store, 'other', 2_000);
    await clock.advance(500);
    const a = startCandidate(clock, store, 'a', { retryPeriodMs: 1_000 }); // attempts at t = 0.5, 1.5, 2.5 ... s
    await clock.advance(9_500); // the holder writes at t = 10 s, then stops
    stopHolder();
    // a sees that last content at its attempt at t = 10.5 s, so it may take over from t = 25.5 s on.
    await clock.advance(15_499);
    assert.equal(a.elector.isLeader(), false, 'not before observedTime + leaseDuration');

    await clock.advance(1);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(store.record?.holderIdentity, 'a');
    assert.equal(store.record.leaseTransitions, 1);
    assert.equal(store.record.acquireTime, clock.wallTime() * 1000, 'a new holder gets a new acquireTime');
    assert.deepEqual(a.events, ['metric:0', 'leader:other', 'leader:a', 'metric:1', 'started']);
    a.controller.abort();
    await a.done;
  });

  for (const [label, renewTimeOffsetMs] of [
    ['far in the future', 365 * 24 * 3600_000],
    ['far in the past', -365 * 24 * 3600_000],
  ] as const) {
    it(`ignores the holder's renewTime when it is ${label}`, async () => {
      const clock = new FakeClock();
      const store = new MemoryLeaseStore();
      const renewTime = (clock.wallTime() + renewTimeOffsetMs) * 1000;
      store.put(record({ holderIdentity: 'skewed', leaseDurationSeconds: 15, renewTime }));
      const a = startCandidate(clock, store, 'a');

      await clock.advance(14_999);
      assert.equal(a.elector.isLeader(), false, 'a past renewTime does not make the lease expire early');
      await clock.advance(2_000);
      assert.equal(a.elector.isLeader(), true, 'a future renewTime does not keep the lease alive');
      a.controller.abort();
      await a.done;
    });
  }

  it("judges expiry by the record's leaseDurationSeconds, not by its own", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put(record({ holderIdentity: 'other', leaseDurationSeconds: 30 }));
    const a = startCandidate(clock, store, 'a'); // its own lease duration is 15 s
    await clock.advance(28_000);
    assert.equal(a.elector.isLeader(), false);
    await clock.advance(4_000);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(store.record?.leaseDurationSeconds, 15, 'the new holder writes its own duration');
    a.controller.abort();
    await a.done;
  });

  it('does not count metadata-only writes (new version, same record) as a renewal by the holder', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put(record({ holderIdentity: 'other' }));
    const a = startCandidate(clock, store, 'a');
    for (let t = 0; t < 16_000; t += 1_000) {
      store.touch();
      await clock.advance(1_000);
    }
    assert.equal(a.elector.isLeader(), true);
    a.controller.abort();
    await a.done;
  });

  it('takes a lease recorded with its own identity at once (a restarted process reclaiming it)', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put(record({ holderIdentity: 'a', acquireTime: 42, leaseTransitions: 3 }));
    const a = startCandidate(clock, store, 'a');
    await clock.advance(0);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(store.record?.acquireTime, 42, 'still the same holder: acquireTime kept');
    assert.equal(store.record.leaseTransitions, 3, 'still the same holder: no transition');
    a.controller.abort();
    await a.done;
  });

  it('lets exactly one of two racing candidates win; the loser gets a conflict and waits', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put(record({ holderIdentity: '', leaseDurationSeconds: 1 }));
    const a = startCandidate(clock, store, 'a');
    const b = startCandidate(clock, store, 'b');
    await clock.advance(60_000);

    assert.equal([a, b].filter((c) => c.elector.isLeader()).length, 1);
    const leader = a.elector.isLeader() ? 'a' : 'b';
    assert.equal(store.record?.holderIdentity, leader);
    assert.equal(a.elector.getLeader(), leader);
    assert.equal(b.elector.getLeader(), leader);
    assert.equal(store.record.leaseTransitions, 1);
    a.controller.abort();
    b.controller.abort();
    await Promise.all([a.done, b.done]);
  });

  it('retries after lock errors without throwing, then acquires', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    a.lock.faults.get = 'fail';
    await clock.advance(10_000);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.settled(), false);
    delete a.lock.faults.get;
    await clock.advance(2_000);
    assert.equal(a.elector.isLeader(), true);
    a.controller.abort();
    await a.done;
  });

  it('jitters polls between retryPeriod and 1.2 * retryPeriod', async () => {
    for (const [random, expectedGets] of [
      [0, 11], // t = 0, 2, 4, ... 20 s
      [0.999_999, 9], // t = 0, 2.4, 4.8, ... 19.2 s
    ] as const) {
      const clock = new FakeClock();
      const store = new MemoryLeaseStore();
      renewingHolder(clock, store, 'other', 1_000);
      const a = startCandidate(clock, store, 'a', { random: () => random });
      await clock.advance(20_000);
      assert.equal(a.lock.calls.filter((call) => call === 'get').length, expectedGets, `random = ${random}`);
      a.controller.abort();
      await a.done;
    }
  });
  it('tries to take the lease the moment it expires by its own observation, not at its next poll', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put(record({ holderIdentity: 'other', leaseDurationSeconds: 15 }));
    // Polls 2.4 s apart: t = 0, 2.4, ... 14.4, 16.8 s. The lease seen at t = 0 expires at t = 15 s.
    const a = startCandidate(clock, store, 'a', { random: () => 0.999_999 });
    await clock.advance(14_999);
    assert.equal(a.elector.isLeader(), false);
    await clock.advance(1);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(a.lock.calls.filter((call) => call === 'get').length, 8, 'seven polls, then the expiry');
    a.controller.abort();
    await a.done;
  });

  it('after an attempt that failed on an expired lease, waits for the next poll (no tight loop)', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.put(record({ holderIdentity: 'other', leaseDurationSeconds: 15 }));
    const a = startCandidate(clock, store, 'a');
    await clock.advance(14_000);
    a.lock.faults.update = 'fail';
    await clock.advance(1_000); // expired: the takeover's update fails
    assert.equal(a.elector.isLeader(), false);
    const updates = (): number => a.lock.calls.filter((call) => call === 'update').length;
    assert.equal(updates(), 1);
    await clock.advance(1_999);
    assert.equal(updates(), 1, 'no attempt before the next poll');
    await clock.advance(1);
    assert.equal(updates(), 2);
    delete a.lock.faults.update;
    await clock.advance(2_000);
    assert.equal(a.elector.isLeader(), true);
    a.controller.abort();
    await a.done;
  });
});

describe('LeaderElector: leading', () => {
  it('renews every retryPeriod, keeping acquireTime and transitions', async () => {
    const clock = new FakeClock();
    const startWallMs = clock.wallTime();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(0);
    const acquired = store.record;
    await clock.advance(10_000);

    const renewals = store.writes.slice(1);
    assert.equal(renewals.length, 5);
    for (const [index, write] of renewals.entries()) {
      assert.equal(write.record.holderIdentity, 'a');
      assert.equal(write.record.acquireTime, acquired?.acquireTime);
      assert.equal(write.record.leaseTransitions, 0);
      assert.equal(write.record.renewTime, (startWallMs + (index + 1) * 2_000) * 1000);
    }
    assert.deepEqual(
      a.lock.calls.slice(2),
      ['update', 'update', 'update', 'update', 'update'],
      'fast path: no get',
    );
    a.controller.abort();
    await a.done;
  });

  it('recovers from a conflicting write that left it the holder (e.g. a label change)', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(0);
    store.touch();
    await clock.advance(2_000);

    assert.deepEqual(a.lock.calls.slice(2), ['update', 'get', 'update'], 'conflict, re-read, renew');
    assert.equal(store.writes.length, 2);
    assert.equal(a.elector.isLeader(), true);
    a.controller.abort();
    await a.done;
  });

  it('steps down when it cannot renew within renewDeadline of its last renewal', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(2_000); // renewed at t = 2 s
    a.lock.faults.update = 'fail';
    a.lock.faults.get = 'fail';
    await clock.advance(9_999);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(a.workSignal?.aborted, false);

    await clock.advance(1); // t = 12 s = last renewal + 10 s
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.workSignal.aborted, true);
    assert.equal(await a.done, 'resolved');
    assert.deepEqual(a.events, ['metric:0', 'leader:a', 'metric:1', 'started', 'metric:0', 'stopped']);
    assert.equal(a.controller.signal.aborted, false, 'run() ended on its own');
  });

  it('cuts a hanging renewal at the deadline', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(0);
    a.lock.faults.update = 'hang';
    await clock.advance(9_999);
    assert.equal(a.elector.isLeader(), true);
    await clock.advance(1);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(await a.done, 'resolved');
    assert.ok(a.events.includes('stopped'));
  });

  it('steps down at once when the lock shows another holder', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(0);
    store.put(record({ holderIdentity: 'intruder' }));
    await clock.advance(2_000);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(await a.done, 'resolved');
    assert.deepEqual(a.events.slice(-3), ['leader:intruder', 'metric:0', 'stopped']);
    assert.equal(store.record?.holderIdentity, 'intruder', 'the loser does not write');
  });

  it('does not wait for guarded work that ignores the abort when leadership is lost', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a', {
      callbacks: {
        onStartedLeading: () => new Promise<void>(() => undefined),
        onStoppedLeading: () => undefined,
      },
    });
    await clock.advance(0);
    a.lock.faults.update = 'fail';
    a.lock.faults.get = 'fail';
    await clock.advance(10_000);
    assert.equal(a.settled(), true);
  });
});

describe('LeaderElector: cancel and release', () => {
  it('with releaseOnCancel: stops the work, waits for it, then writes an empty holder with a 1 s lease', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const order: string[] = [];
    let finishWork: () => void = () => undefined;
    const a = startCandidate(clock, store, 'a', {
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: (signal) =>
          new Promise<void>((resolve) => {
            signal.addEventListener('abort', () => order.push('work aborted'));
            finishWork = () => {
              order.push('work finished');
              resolve();
            };
          }),
        onStoppedLeading: () => order.push(`stopped (holder '${store.record?.holderIdentity ?? ''}')`),
      },
    });
    await clock.advance(4_000);
    const transitions = store.record?.leaseTransitions;
    a.controller.abort();
    await clock.advance(1_000);
    assert.deepEqual(order, ['work aborted'], 'the lease is not released while guarded work runs');
    assert.equal(store.record?.holderIdentity, 'a');

    finishWork();
    assert.equal(await a.done, 'resolved');
    assert.deepEqual(order, ['work aborted', 'work finished', "stopped (holder '')"]);
    const released = store.record;
    assert.equal(released.holderIdentity, '');
    assert.equal(released.leaseDurationSeconds, 1);
    assert.equal(released.leaseTransitions, transitions);
    assert.equal(released.renewTime, clock.wallTime() * 1000);
    assert.equal(a.elector.getLeader(), '');
  });

  it('keeps renewing while the stopped work drains, so no standby can start before it has ended', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    let finishWork: () => void = () => undefined;
    const a = startCandidate(clock, store, 'a', {
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: () =>
          new Promise<void>((resolve) => {
            finishWork = resolve;
          }),
        onStoppedLeading: () => undefined,
      },
    });
    await clock.advance(4_000);
    a.controller.abort();
    const writesAtCancel = store.writes.length;
    // Three lease durations of draining: a standby watching the record would never see it unchanged.
    await clock.advance(45_000);
    const renewals = store.writes.slice(writesAtCancel);
    assert.equal(renewals.length, 22, 'a renewal every retry period while the work drains');
    assert.ok(renewals.every((write) => write.record.holderIdentity === 'a'));
    assert.equal(a.elector.isLeader(), true);
    const b = startCandidate(clock, store, 'b');
    await clock.advance(20_000);
    assert.equal(b.elector.isLeader(), false, 'the standby waits while the draining leader renews');

    finishWork();
    assert.equal(await a.done, 'resolved');
    assert.equal(a.elector.isLeader(), false);
    await clock.advance(3_000);
    assert.equal(b.elector.isLeader(), true, 'the standby takes the released lease at its next attempt');
    b.controller.abort();
    await b.done;
  });

  it('a renewal failing while the work drains is a loss: no release, no more waiting for the work', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const events: string[] = [];
    const a = startCandidate(clock, store, 'a', {
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: () => new Promise<void>(() => undefined),
        onStoppedLeading: () => events.push('stopped'),
      },
    });
    await clock.advance(4_000); // renewed at t = 4 s
    a.controller.abort();
    a.lock.faults.update = 'fail';
    a.lock.faults.get = 'fail';
    await clock.advance(9_999);
    assert.equal(a.settled(), false);
    await clock.advance(1); // last renewal + renewDeadline
    await settle();
    assert.equal(a.settled(), true, 'run() ended at the renew deadline, not waiting for the work');
    assert.equal(await a.done, 'resolved');
    assert.deepEqual(events, ['stopped']);
    assert.equal(store.record?.holderIdentity, 'a', 'not released: the work may still run');
  });

  it('work that ends by rejecting after it was told to stop has stopped, not failed', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a', {
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: (signal) =>
          new Promise<void>((_resolve, reject) => {
            signal.addEventListener('abort', () => {
              reject(signal.reason as Error);
            });
          }),
        onStoppedLeading: () => undefined,
      },
    });
    await clock.advance(2_000);
    a.controller.abort();
    assert.equal(await a.done, 'resolved');
    assert.equal(store.record?.holderIdentity, '');
  });

  it('without releaseOnCancel: leaves the lease as last renewed', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(3_000);
    const writes = store.writes.length;
    a.controller.abort();
    assert.equal(await a.done, 'resolved');
    assert.equal(store.writes.length, writes);
    assert.equal(store.record?.holderIdentity, 'a');
    assert.deepEqual(a.events.slice(-2), ['metric:0', 'stopped']);
  });

  it('a standby takes a released lease at its next attempt, well before the lease duration', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a', { releaseOnCancel: true });
    await clock.advance(0);
    const b = startCandidate(clock, store, 'b');
    await clock.advance(5_000);
    assert.equal(b.elector.isLeader(), false);

    a.controller.abort();
    await a.done;
    await clock.advance(2_000);
    assert.equal(b.elector.isLeader(), true);
    assert.equal(store.record?.leaseTransitions, 1);
    b.controller.abort();
    await b.done;
  });

  it('does not release a lease someone else took meanwhile', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a', { releaseOnCancel: true });
    await clock.advance(0);
    store.put(record({ holderIdentity: 'intruder' }));
    a.controller.abort();
    await a.done;
    assert.equal(store.record?.holderIdentity, 'intruder');
  });

  it('releases after a renew that reached the lock unseen (the cancel cut off its answer)', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a', { releaseOnCancel: true });
    await clock.advance(3_000);
    // The API server applied a renew whose response the cancel discarded: the Lease's version moved
    // past the one `a` last wrote. Releasing from that version would conflict.
    const renewed = store.record;
    assert.ok(renewed);
    store.put({ ...renewed, renewTime: clock.wallTime() * 1000 }, 'a');
    a.controller.abort();
    await a.done;
    assert.equal(store.record?.holderIdentity, '');
    assert.equal(store.record.leaseDurationSeconds, 1);
  });

  it('retries a release that conflicts with a write between its read and its update', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a', { releaseOnCancel: true });
    await clock.advance(3_000);
    a.controller.abort();
    let interleaved = false;
    a.lock.beforeOperation = (operation) => {
      if (operation !== 'update' || interleaved) return;
      interleaved = true;
      store.touch(); // e.g. a label added to the Lease
    };
    await a.done;
    assert.ok(interleaved);
    assert.equal(store.record?.holderIdentity, '');
  });

  it('counts transitions across holders: a (0) -> release -> b (1) -> release -> a (2)', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const holders: [string, number][] = [];
    for (const identity of ['a', 'b', 'a']) {
      const candidate = startCandidate(clock, store, identity, { releaseOnCancel: true });
      await clock.advance(0);
      holders.push([store.record?.holderIdentity ?? '', store.record?.leaseTransitions ?? -1]);
      candidate.controller.abort();
      await candidate.done;
    }
    assert.deepEqual(holders, [
      ['a', 0],
      ['b', 1],
      ['a', 2],
    ]);
  });
});

describe('LeaderElector: guarded work failures', () => {
  for (const [label, work] of [
    ['rejects', () => Promise.reject(new Error('boom'))],
    [
      'throws',
      () => {
        throw new Error('boom');
      },
    ],
  ] as const) {
    it(`steps down and rejects run() when onStartedLeading ${label}`, async () => {
      const clock = new FakeClock();
      const store = new MemoryLeaseStore();
      const events: string[] = [];
      const a = startCandidate(clock, store, 'a', {
        releaseOnCancel: true,
        callbacks: { onStartedLeading: work, onStoppedLeading: () => events.push('stopped') },
      });
      await clock.advance(0);
      const error = await a.done;
      assert.ok(error instanceof LeaderWorkError);
      assert.equal((error.cause as Error).message, 'boom');
      assert.deepEqual(events, ['stopped']);
      assert.equal(a.elector.isLeader(), false);
      assert.equal(store.record?.holderIdentity, '', 'released, since the work has stopped');
    });
  }

  it('keeps leading when onStartedLeading returns without error', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await clock.advance(30_000);
    assert.equal(a.elector.isLeader(), true);
    a.controller.abort();
    await a.done;
  });

  it('survives a throwing onNewLeader', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a', {
      callbacks: {
        onStartedLeading: () => undefined,
        onStoppedLeading: () => undefined,
        onNewLeader: () => {
          throw new Error('boom');
        },
      },
    });
    await clock.advance(5_000);
    assert.equal(a.elector.isLeader(), true);
    a.controller.abort();
    assert.equal(await a.done, 'resolved');
  });

  it('refuses a second concurrent run()', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = startCandidate(clock, store, 'a');
    await assert.rejects(a.elector.run(new AbortController().signal), /already running/);
    a.controller.abort();
    await a.done;
  });
});

describe('LeaderElector: options', () => {
  const lock = new MemoryLock(new MemoryLeaseStore(), 'a');
  const callbacks = { onStartedLeading: () => undefined, onStoppedLeading: () => undefined };
  const make = (options: Partial<LeaderElectorOptions>): LeaderElector =>
    new LeaderElector({ lock, callbacks, ...options });

  it("accepts client-go's defaults and the short test durations", async () => {
    make({});
    make({ leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 400 });
    await settle();
  });

  for (const [options, message] of [
    [
      { leaseDurationMs: 10_000, renewDeadlineMs: 10_000 },
      /leaseDurationMs \(10000\) must be greater than renewDeadlineMs \(10000\)/,
    ],
    [
      { renewDeadlineMs: 2_400, retryPeriodMs: 2_000 },
      /renewDeadlineMs \(2400\) must be greater than 1.2 \* retryPeriodMs \(2400\)/,
    ],
    [{ leaseDurationMs: 0 }, /leaseDurationMs must be a positive number/],
    [{ renewDeadlineMs: -1 }, /renewDeadlineMs must be a positive number/],
    [{ retryPeriodMs: 0 }, /retryPeriodMs must be a positive number/],
    [{ retryPeriodMs: Number.NaN }, /retryPeriodMs must be a positive number/],
    [{ leaseDurationMs: 15_500 }, /whole number of seconds/],
    [{ lock: new MemoryLock(new MemoryLeaseStore(), '') }, /identity must not be empty/],
    [{ callbacks: { onStoppedLeading: () => undefined } as never }, /onStartedLeading must be a function/],
    [{ callbacks: { onStartedLeading: () => undefined } as never }, /onStoppedLeading must be a function/],
  ] as const) {
    it(`rejects ${JSON.stringify(options)}`, () => {
      assert.throws(
        () => make(options),
        (error: unknown) => {
          assert.ok(error instanceof LeaderElectionConfigError);
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }
});
