/**
 * Three sharders in this process against the real API server, with short durations: the buckets they
 * run never overlap (sampled continuously and checked at every start), they converge to `assign`, a
 * graceful stop hands over within a few retry periods, a crash is taken over only after the lease
 * duration, and the crashed member's Lease is deleted after ten.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { KubeClient } from '@loopwright/client';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { createLogger } from '../log/index.ts';
import { assign } from './assignment.ts';
import { formatHoldings, HOLDINGS_ANNOTATION } from './holdings.ts';
import { LEASES } from '@loopwright/leader-election';
import { decodeMemberLease, memberLeaseName, type LeaseObject } from './member-lease.ts';
import { haltAll, startSharderProcess, type SharderProcess } from './sharder-process.test-support.ts';
import { BUCKETS } from './space.ts';

const RING = 'int';
const LEASE_MS = 3_000;
const RENEW_MS = 2_500;
const RETRY_MS = 500;
const SAMPLE_MS = 10;

interface Member extends SharderProcess {
  readonly identity: string;
  /** Buckets started and whose drain has not resolved. */
  readonly active: Set<number>;
  /** When (Date.now()) each bucket was last started. */
  readonly startedAt: Map<number, number>;
  dead: boolean;
  lostCalls: number;
}

const kc = loadTestKubeConfig();
const admin = new KubeClient(kc);
const leases = admin.resource<LeaseObject>(LEASES);
const members = new Map<string, Member>();
const violations: string[] = [];
/** The runtime's JSON log lines, all members together. */
const lines: Record<string, unknown>[] = [];
let namespace: TestNamespace;
let sampler: NodeJS.Timeout | undefined;

function overlaps(): string[] {
  const owner = new Map<number, string>();
  const found: string[] = [];
  for (const member of members.values()) {
    if (member.dead) continue;
    for (const bucket of member.active) {
      const other = owner.get(bucket);
      if (other !== undefined) found.push(`${bucket} runs in ${other} and ${member.identity}`);
      owner.set(bucket, member.identity);
    }
  }
  return found;
}

function join(identity: string): Member {
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const active = new Set<number>();
  const startedAt = new Map<number, number>();
  const state = { dead: false, lostCalls: 0 };
  const process = startSharderProcess({
    kc,
    namespace: namespace.name,
    ring: RING,
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    logger: createLogger({ format: 'json', level: 'info', stream }).child({ component: 'sharding' }),
    callbacks: {
      start: (buckets) => {
        for (const bucket of buckets) {
          for (const other of members.values()) {
            if (other.identity !== identity && !other.dead && other.active.has(bucket)) {
              violations.push(`${identity} started ${bucket} while ${other.identity} runs it`);
            }
          }
          active.add(bucket);
          startedAt.set(bucket, Date.now());
        }
      },
      drain: (buckets) => {
        for (const bucket of buckets) active.delete(bucket);
        return Promise.resolve();
      },
      lost: () => {
        member.lostCalls++;
        active.clear();
      },
    },
  });
  const member: Member = Object.assign(state, { ...process, identity, active, startedAt });
  members.set(identity, member);
  return member;
}

function member(identity: string): Member {
  const found = members.get(identity);
  assert.ok(found, identity);
  return found;
}

async function lease(identity: string): Promise<LeaseObject | undefined> {
  return leases.getOptional({ namespace: namespace.name, name: memberLeaseName(RING, identity) });
}

/** Every member runs its `assign` share and its Lease lists exactly that. */
async function assertConverged(identities: string[]): Promise<void> {
  const target = assign(identities);
  for (const identity of identities) {
    const share = [...(target.get(identity) ?? [])];
    assert.deepEqual(
      [...member(identity).active].sort((a, b) => a - b),
      share,
      identity,
    );
    const annotations = (await lease(identity))?.metadata?.annotations;
    assert.equal(annotations?.[HOLDINGS_ANNOTATION], formatHoldings(share), identity);
  }
}

function covered(buckets: readonly number[], except: string): boolean {
  return buckets.every((bucket) =>
    [...members.values()].some((other) => other.identity !== except && other.active.has(bucket)),
  );
}

before(async () => {
  namespace = await createTestNamespace(kc, 'sharder');
  sampler = setInterval(() => {
    violations.push(...overlaps());
  }, SAMPLE_MS);
});

after(async () => {
  clearInterval(sampler);
  await haltAll(members.values());
  await namespace.cleanup();
  await admin.close();
});

describe('Sharder against the API server', () => {
  it('converges three members to the assignment, never running a bucket twice', async (t) => {
    const joinedAt = Date.now();
    for (const identity of ['ctrl-a', 'ctrl-b', 'ctrl-c']) join(identity);
    await eventually(() => assertConverged(['ctrl-a', 'ctrl-b', 'ctrl-c']), { timeoutMs: 20_000 });
    const backedOff = lines.filter(
      ({ message }) => message === 'another member claimed buckets too: backing off',
    );
    t.diagnostic(
      `converged in ${Date.now() - joinedAt} ms, ${backedOff.length} claims backed off on the way`,
    );
    const list = await leases.list({
      namespace: namespace.name,
      labelSelector: `sharding.loopwright.dev/ring=${RING}`,
    });
    assert.equal(list.items.length, 3);
    for (const item of list.items) {
      const { record } = decodeMemberLease(item, 'GET');
      assert.equal(record.leaseDurationSeconds, LEASE_MS / 1000);
      assert.match(item.spec?.renewTime as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }
    assert.deepEqual(violations, []);
  });

  it('hands over the buckets of a member that stops, within a few retry periods', async (t) => {
    const leaving = member('ctrl-c');
    const held = [...leaving.active];
    const linesBefore = lines.length;
    const stoppedAt = Date.now();
    leaving.stop.abort();
    assert.equal(await leaving.run, 'stopped');
    const leftAt = Date.now();
    assert.equal(leaving.active.size, 0);
    assert.equal(await lease('ctrl-c'), undefined);
    await eventually(
      () => {
        assert.ok(covered(held, 'ctrl-c'));
      },
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    const handedOverMs = Date.now() - leftAt;
    t.diagnostic(`graceful stop: left in ${leftAt - stoppedAt} ms, buckets taken ${handedOverMs} ms later`);
    assert.ok(handedOverMs <= 8 * RETRY_MS, `taken over ${handedOverMs} ms after the leave`);
    await eventually(() => assertConverged(['ctrl-a', 'ctrl-b']), { timeoutMs: 10_000 });
    // Logged by the takers. Not necessarily `from: ['ctrl-c']`: a taker that read the ring only after the
    // leaver had emptied its holdings (or deleted its Lease) never saw who held them, which a loaded
    // machine makes likely.
    assert.ok(lines.slice(linesBefore).some((line) => line.message === 'took buckets'));
    assert.deepEqual(violations, []);
  });

  it('takes over a crashed member after the lease duration, and deletes its Lease after ten', async (t) => {
    const crashed = member('ctrl-b');
    const held = [...crashed.active];
    crashed.dead = true;
    crashed.halt.abort();
    const crashedAt = Date.now();
    assert.equal(await crashed.run, 'halted');
    const last = await lease('ctrl-b');
    assert.ok(last);
    const { record } = decodeMemberLease(last, 'GET');
    const lastRenewMs = (record.renewTime ?? 0) / 1000;

    await eventually(
      () => {
        assert.ok(covered(held, 'ctrl-b'));
      },
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    const takenAt = Math.min(...held.map((bucket) => member('ctrl-a').startedAt.get(bucket) ?? Infinity));
    t.diagnostic(
      `crash: taken over ${takenAt - crashedAt} ms after the crash, ${takenAt - lastRenewMs} ms after its last renewal`,
    );
    // Same process, same wall clock: a judged it expired no sooner than a lease duration after it wrote.
    assert.ok(takenAt - lastRenewMs >= LEASE_MS, `taken ${takenAt - lastRenewMs} ms after its last renewal`);
    await eventually(() => assertConverged(['ctrl-a']), { timeoutMs: 10_000 });
    assert.ok(await lease('ctrl-b'), 'the Lease stays until ten lease durations');

    await eventually(
      async () => {
        assert.equal(await lease('ctrl-b'), undefined);
      },
      { timeoutMs: 15 * LEASE_MS, intervalMs: 100 },
    );
    const deletedMs = Date.now() - lastRenewMs;
    t.diagnostic(`crash: Lease deleted ${deletedMs} ms after its last renewal`);
    assert.ok(deletedMs >= 10 * LEASE_MS);
    assert.equal(member('ctrl-a').active.size, BUCKETS);
    assert.equal(member('ctrl-a').lostCalls, 0);
    assert.deepEqual(violations, []);
  });

  it('leaves no Lease behind when the last member stops', async () => {
    member('ctrl-a').stop.abort();
    assert.equal(await member('ctrl-a').run, 'stopped');
    const list = await leases.list({
      namespace: namespace.name,
      labelSelector: `sharding.loopwright.dev/ring=${RING}`,
    });
    assert.deepEqual(list.items, []);
    assert.deepEqual(violations, []);
  });
});
