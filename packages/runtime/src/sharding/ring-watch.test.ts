import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import type { LeaderElectionRecord } from '@loopwright/leader-election';
import { MemoryLeaseStore, type MemoryLeaseApi } from './lease-store.test-support.ts';
import { MemberLeases } from './member-lease.ts';
import { watchRing } from './ring-watch.ts';

const record = (holderIdentity: string, renewTime: number): LeaderElectionRecord => ({
  holderIdentity,
  leaseDurationSeconds: 15,
  acquireTime: 0,
  renewTime,
  leaseTransitions: 0,
});

function setup(): {
  clock: FakeClock;
  store: MemoryLeaseStore;
  /** The watcher's handle: its faults fail or hang its watches. */
  api: MemoryLeaseApi;
  seen: string[];
  warnings: string[];
  debugs: string[];
  run: (signal: AbortSignal) => Promise<void>;
} {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const api = store.api('watcher');
  const seen: string[] = [];
  const warnings: string[] = [];
  const debugs: string[] = [];
  const log = (): void => {};
  const run = (signal: AbortSignal): Promise<void> =>
    watchRing(
      {
        leases: new MemberLeases(api, 'ns', 'ring'),
        clock,
        logger: {
          debug: (message) => debugs.push(message),
          info: log,
          error: log,
          warn: (message) => warnings.push(message),
        },
        fields: {},
        onChange: (lease) => seen.push(`${lease.name}@${clock.now()}: ${lease.holdings ?? ''}`),
        random: () => 0,
      },
      signal,
    );
  return { clock, store, api, seen, warnings, debugs, run };
}

describe('watchRing', () => {
  it('reports each write of a Lease of the ring when it arrives, and no other Lease', async () => {
    const { clock, store, seen, run } = setup();
    const stop = new AbortController();
    const watching = run(stop.signal);
    await clock.advance(0);
    const ring = new MemberLeases(store.api('a'), 'ns', 'ring');
    const other = new MemberLeases(store.api('x'), 'ns', 'other');
    await clock.advance(1_000);
    const created = await ring.create('ring-a', record('a', 1), '', stop.signal);
    await other.create('other-x', record('x', 1), '', stop.signal);
    await clock.advance(500);
    await ring.update(created, record('a', 2), '0-9', stop.signal);
    await clock.advance(0);
    assert.deepEqual(seen, ['ring-a@1000: ', 'ring-a@1500: 0-9']);
    stop.abort();
    await watching;
  });

  it('resumes a watch that failed after the backoff, and ends when its signal aborts', async () => {
    const { clock, store, api, seen, warnings, run } = setup();
    const ring = new MemberLeases(store.api('a'), 'ns', 'ring');
    const stop = new AbortController();
    api.faults.watch = 'fail';
    const watching = run(stop.signal);
    await clock.advance(0);
    assert.deepEqual(warnings, ['watching the ring failed: its changes are seen at the next list meanwhile']);
    delete api.faults.watch;
    // The reflector's first delay, 800 ms (no jitter with this randomness).
    await clock.advance(799);
    const created = await ring.create('ring-a', record('a', 1), '', stop.signal);
    await clock.advance(1);
    await ring.update(created, record('a', 2), '', stop.signal);
    await clock.advance(0);
    assert.deepEqual(seen, ['ring-a@800: ']);
    stop.abort();
    await watching;
    assert.equal(warnings.length, 1);
  });

  it('warns once of a watch the Role forbids, retries it at debug, and starts it once allowed', async () => {
    const { clock, store, api, seen, warnings, debugs, run } = setup();
    const ring = new MemberLeases(store.api('a'), 'ns', 'ring');
    const stop = new AbortController();
    api.faults.watch = 'forbid';
    const watching = run(stop.signal);
    // 800 + 1,600 + 3,200 ms of backoff: four refused starts.
    await clock.advance(5_600);
    assert.equal(warnings.length, 1);
    assert.equal(debugs.length, 3);
    delete api.faults.watch;
    await clock.advance(6_400);
    await ring.create('ring-a', record('a', 1), '', stop.signal);
    await clock.advance(0);
    assert.deepEqual(seen, ['ring-a@12000: ']);
    stop.abort();
    await watching;
  });
});
