/**
 * Issue 39's bound on a hand-off after a crash, against the real API server: a member halted as by
 * SIGKILL leaves its Lease unrenewed after its last renewal, and the survivor's Lease lists all its buckets within the lease
 * duration + 1 s of its last renewal. A retry period long next to that second (3 s, a tick up to 3.6 s)
 * makes both delays this needs gone visible: a renewal seen only at the next tick's list, and an
 * expiry acted on only at the next tick. The member is halted just after a tick of the survivor (its
 * write, then its list), and its last renewal is written by the test on its behalf (as the member
 * would have: renewTime now, holdings unchanged) 1.5 s after that tick, so that the timing does not
 * depend on how the two drift:
 * - the survivor's next tick comes 3 to 3.6 s after that one, 1.5 s or more after the renewal: seen only
 *   by that tick's list, the renewal would expire 1.5 s late;
 * - its second tick comes at most 7.2 s after that one (plus the ticks' requests), before the expiry
 *   (7.5 s after it), and its third at least 9 s after it, 1.5 s or more after the expiry: acted on
 *   only at a regular tick, the expiry would be late too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { KubeClient } from '@loopwright/client';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { LEASES } from '@loopwright/leader-election';
import { assign } from './assignment.ts';
import { parseHoldings } from './holdings.ts';
import { decodeMemberLease, MemberLeases, RING_LABEL, type LeaseObject } from './member-lease.ts';
import { haltAll, startSharderProcess, type SharderProcess } from './sharder-process.test-support.ts';

const RING = 'crash';
const LEASE_MS = 6_000;
const RENEW_MS = 5_000;
const RETRY_MS = 3_000;
/** Issue 39: no At waits more than the lease duration + 1 s past its schedule because of a hand-off. */
const SLACK_MS = 1_000;
const MEMBERS = ['crash-a', 'crash-b'];
/** The halted member's last renewal comes this long after a write of the survivor; see above. */
const AFTER_SURVIVOR_MS = 1_500;

const kc = loadTestKubeConfig();
const admin = new KubeClient(kc);
const leases = admin.resource<LeaseObject>(LEASES);
const members = new Map<string, SharderProcess>();
let namespace: TestNamespace;
const watching = new AbortController();
let watched: Promise<void> = Promise.resolve();

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function join(identity: string): void {
  const durations = { leaseDurationMs: LEASE_MS, renewDeadlineMs: RENEW_MS, retryPeriodMs: RETRY_MS };
  const callbacks = { start() {}, drain: () => Promise.resolve(), lost() {} };
  const options = { kc, namespace: namespace.name, ring: RING, identity, ...durations };
  members.set(identity, startSharderProcess({ ...options, logger: quiet, callbacks }));
}

/** Each member's holdings as its Lease lists them now. */
async function holdings(): Promise<Map<string, number[]>> {
  const list = await leases.list({ namespace: namespace.name, labelSelector: `${RING_LABEL}=${RING}` });
  return new Map(
    list.items.map((item) => {
      const lease = decodeMemberLease(item, 'GET');
      return [lease.record.holderIdentity, parseHoldings(lease.holdings ?? '')];
    }),
  );
}

before(async () => {
  namespace = await createTestNamespace(kc, 'sharder-crash');
  watched = (async () => {
    const events = leases.watch({
      namespace: namespace.name,
      labelSelector: `${RING_LABEL}=${RING}`,
      signal: watching.signal,
    });
    for await (const event of events) {
      if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue;
      onWritten?.(decodeMemberLease(event.object, 'WATCH').record.holderIdentity);
    }
  })();
});

/** Called with the writer of each Lease write this test's watch sees. */
let onWritten: ((identity: string) => void) | undefined;

after(async () => {
  watching.abort();
  await watched;
  await haltAll(members.values());
  await namespace.cleanup();
  await admin.close();
});

describe('Sharder after a crash, against the API server', () => {
  it('lists all of a halted member buckets in the survivor Lease within the lease duration + 1 s of its last renewal', async (t) => {
    for (const identity of MEMBERS) join(identity);
    const target = assign(MEMBERS);
    await eventually(
      async () => {
        const listed = await holdings();
        for (const identity of MEMBERS)
          assert.deepEqual(listed.get(identity), target.get(identity), identity);
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );

    const crashed = members.get('crash-b');
    assert.ok(crashed);
    const held = target.get('crash-b') ?? [];
    // Halted just after a tick of the survivor; its last renewal, as it would have written it, 1.5 s
    // after that tick: less than a lease duration after its own last renewal (a tick, 3.6 s at most).
    const survivorWroteAt = await new Promise<number>((resolve) => {
      onWritten = (identity) => {
        if (identity !== 'crash-a') return;
        onWritten = undefined;
        resolve(Date.now());
      };
    });
    crashed.halt.abort();
    assert.equal(await crashed.run, 'halted');
    await setTimeout(survivorWroteAt + AFTER_SURVIVOR_MS - Date.now());
    const ring = new MemberLeases(leases, namespace.name, RING);
    const base = (await ring.list(AbortSignal.timeout(RENEW_MS))).find(
      ({ record }) => record.holderIdentity === 'crash-b',
    );
    assert.ok(base);
    const lastRenewMs = Date.now();
    const record = { ...base.record, renewTime: lastRenewMs * 1000 };
    await ring.update(base, record, base.holdings ?? '', AbortSignal.timeout(RENEW_MS));
    let takenAt = 0;
    await eventually(
      async () => {
        const listed = await holdings();
        const survivor = new Set(listed.get('crash-a'));
        takenAt = Date.now();
        assert.ok(held.every((bucket) => survivor.has(bucket)));
      },
      { timeoutMs: 4 * LEASE_MS, intervalMs: 20 },
    );
    const waitedMs = takenAt - lastRenewMs;
    t.diagnostic(`the survivor listed its buckets ${Math.round(waitedMs)} ms after its last renewal`);
    assert.ok(waitedMs >= LEASE_MS, `taken ${waitedMs} ms after its last renewal, before it expired`);
    assert.ok(waitedMs <= LEASE_MS + SLACK_MS, `taken ${waitedMs} ms after its last renewal`);
  });
});
