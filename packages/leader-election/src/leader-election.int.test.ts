import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeClient, isConflict, type RestRequestObservation } from '@loopwright/client';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { LeaderElector, type LeaderElectorOptions } from './elector.ts';
import { LeaseLock } from './lease-lock.ts';
import type { Logger } from './logger.ts';
import { formatMicroTime, parseMicroTime } from './micro-time.ts';

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const silent: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
/** Short durations so takeovers happen within seconds; the same ratios as client-go's defaults. */
const FAST = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 400 } as const;

interface RawLease {
  metadata: { resourceVersion: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/**
 * The Lease as the API server stores it, read and written on a handle of its own: plain JSON objects
 * in and out, so what the tests write is exactly what client-go would, independent of the LeaseLock.
 */
const LEASES = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
} as const;

describe('leader election on a real API server', () => {
  let kc: KubeConfig;
  let client: KubeClient;
  let namespace: TestNamespace;
  let leaseCount = 0;
  const running: { controller: AbortController; done: Promise<unknown> }[] = [];

  before(async () => {
    kc = loadTestKubeConfig();
    client = new KubeClient(kc);
    namespace = await createTestNamespace(kc, 'leader-election');
  });

  after(async () => {
    for (const candidate of running) candidate.controller.abort();
    await Promise.all(running.map((candidate) => candidate.done));
    await namespace.cleanup();
    await client.close();
  });

  const newLeaseName = (): string => `lease-${String(++leaseCount)}`;
  const leases = () => client.resource<RawLease>(LEASES);
  const readLease = (name: string): Promise<RawLease> => leases().get({ namespace: namespace.name, name });

  function candidate(leaseName: string, identity: string, options: Partial<LeaderElectorOptions> = {}) {
    const events: string[] = [];
    const controller = new AbortController();
    const lock = new LeaseLock({ client, namespace: namespace.name, name: leaseName, identity });
    const elector = new LeaderElector({
      lock,
      ...FAST,
      logger: silent,
      callbacks: {
        onStartedLeading: () => void events.push('started'),
        onStoppedLeading: () => void events.push('stopped'),
        onNewLeader: (holder) => void events.push(`leader:${holder}`),
      },
      ...options,
    });
    const done = elector.run(controller.signal).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    running.push({ controller, done });
    return { elector, events, controller, done };
  }

  it('LeaseLock: absent -> undefined, create, conflicting update -> 409 Conflict', async () => {
    const name = newLeaseName();
    const first = new LeaseLock({ client, namespace: namespace.name, name, identity: 'first' });
    const second = new LeaseLock({ client, namespace: namespace.name, name, identity: 'second' });
    const signal = new AbortController().signal;
    assert.equal(await first.get(signal), undefined);

    const record = {
      holderIdentity: 'first',
      leaseDurationSeconds: 5,
      acquireTime: 1,
      renewTime: 2,
      leaseTransitions: 0,
    };
    await first.create(record, signal);
    await assert.rejects(second.create(record, signal), (error: unknown) => {
      assert.ok(error instanceof KubeApiError);
      assert.equal(error.reason, 'AlreadyExists');
      return true;
    });
    assert.deepEqual(await second.get(signal), record);
    await first.update({ ...record, renewTime: 3 }, signal);
    await assert.rejects(second.update({ ...record, holderIdentity: 'second' }, signal), (error: unknown) => {
      assert.ok(error instanceof KubeApiError);
      assert.equal(isConflict(error), true);
      assert.equal(error.status, 409);
      return true;
    });
    assert.equal((await readLease(name)).spec.holderIdentity, 'first');
  });

  it("LeaseLock sends each request through its client, seen by the client's observer", async () => {
    const name = newLeaseName();
    const seen: string[] = [];
    const observed = new KubeClient(kc, {
      observer: {
        observeRequest: ({ method, path, statusCode }: RestRequestObservation) =>
          seen.push(`${method} ${path.split('/').pop() ?? ''} ${statusCode ?? '-'}`),
      },
    });
    const lock = new LeaseLock({
      client: observed,
      namespace: namespace.name,
      name,
      identity: 'observed',
    });
    const signal = new AbortController().signal;
    await lock.get(signal);
    const record = {
      holderIdentity: 'observed',
      leaseDurationSeconds: 5,
      acquireTime: 1,
      renewTime: 2,
      leaseTransitions: 0,
    };
    await lock.create(record, signal);
    await assert.rejects(lock.create(record, signal));
    assert.deepEqual(seen, [`GET ${name} 404`, 'POST leases 201', 'POST leases 409']);
    await observed.close();
  });

  it('the API server rejects renewTime as Date#toISOString writes it (three digits): why MicroTime matters', async () => {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { namespace: namespace.name, name: newLeaseName() },
      spec: { holderIdentity: 'js', leaseDurationSeconds: 2, renewTime: new Date().toISOString() },
    } as unknown as RawLease;
    await assert.rejects(leases().create(lease), (error: KubeApiError) => error.status === 400);
  });

  it('writes MicroTime timestamps (six fractional digits, UTC) that read back exactly', async () => {
    const name = newLeaseName();
    const a = candidate(name, 'a');
    await eventually(() => {
      assert.equal(a.elector.isLeader(), true);
    });
    const lease = await readLease(name);
    assert.match(lease.spec.acquireTime ?? '', MICRO_TIME);
    assert.match(lease.spec.renewTime ?? '', MICRO_TIME);
    assert.equal(lease.spec.holderIdentity, 'a');
    assert.equal(lease.spec.leaseDurationSeconds, 2);
    assert.equal(lease.spec.leaseTransitions, 0);
    const lock = new LeaseLock({ client, namespace: namespace.name, name, identity: 'reader' });
    const record = await lock.get(new AbortController().signal);
    assert.equal(formatMicroTime(record?.renewTime ?? 0), lease.spec.renewTime);
    a.controller.abort();
    await a.done;
  });

  it('two candidates: exactly one leads, the other sees it as leader', async () => {
    const name = newLeaseName();
    const a = candidate(name, 'a');
    const b = candidate(name, 'b');
    await eventually(() => {
      assert.equal(Number(a.elector.isLeader()) + Number(b.elector.isLeader()), 1);
      assert.equal(a.elector.getLeader(), b.elector.getLeader());
    });
    // Several renew periods later, still exactly one, and the same one.
    const leader = a.elector.getLeader();
    await new Promise((resolve) => setTimeout(resolve, 1.5 * FAST.leaseDurationMs));
    assert.equal(Number(a.elector.isLeader()) + Number(b.elector.isLeader()), 1);
    assert.equal((await readLease(name)).spec.holderIdentity, leader);
    a.controller.abort();
    b.controller.abort();
    await Promise.all([a.done, b.done]);
  });

  it('a leader that stops renewing without release is replaced only after the lease duration', async () => {
    const name = newLeaseName();
    const a = candidate(name, 'a');
    await eventually(() => {
      assert.equal(a.elector.isLeader(), true);
    });
    const b = candidate(name, 'b');
    await eventually(() => {
      assert.equal(b.elector.getLeader(), 'a');
    });
    a.controller.abort(); // no releaseOnCancel: a simply stops renewing
    await a.done;
    const abandoned = await readLease(name);
    assert.equal(abandoned.spec.holderIdentity, 'a');

    await eventually(
      () => {
        assert.equal(b.elector.isLeader(), true);
      },
      { timeoutMs: 10_000 },
    );
    const taken = await readLease(name);
    assert.equal(taken.spec.holderIdentity, 'b');
    assert.equal(taken.spec.leaseTransitions, 1);
    // Both timestamps come from this machine's clock: b took over no earlier than a lease duration
    // after a's last renewal.
    const waitedMicros =
      parseMicroTime(taken.spec.acquireTime ?? '') - parseMicroTime(abandoned.spec.renewTime ?? '');
    assert.ok(waitedMicros >= FAST.leaseDurationMs * 1000, `took over after only ${waitedMicros} µs`);
    b.controller.abort();
    await b.done;
  });

  it('a released lease is taken over at once, well before the lease duration', async () => {
    const name = newLeaseName();
    const slow = { leaseDurationMs: 10_000, renewDeadlineMs: 8_000, retryPeriodMs: 400 };
    const a = candidate(name, 'a', { ...slow, releaseOnCancel: true });
    await eventually(() => {
      assert.equal(a.elector.isLeader(), true);
    });
    const b = candidate(name, 'b', slow);
    await eventually(() => {
      assert.equal(b.elector.getLeader(), 'a');
    });

    a.controller.abort();
    assert.equal(await a.done, 'resolved');
    const released = await readLease(name);
    assert.equal(released.spec.holderIdentity, '');
    assert.equal(released.spec.leaseDurationSeconds, 1);
    assert.match(released.spec.renewTime ?? '', MICRO_TIME);

    await eventually(
      () => {
        assert.equal(b.elector.isLeader(), true);
      },
      { timeoutMs: 5_000 },
    );
    const taken = await readLease(name);
    const waitedMicros =
      parseMicroTime(taken.spec.acquireTime ?? '') - parseMicroTime(released.spec.renewTime ?? '');
    assert.ok(
      waitedMicros < slow.leaseDurationMs * 1000,
      `took ${waitedMicros} µs to take over a released lease`,
    );
    assert.equal(taken.spec.leaseTransitions, 1);
    b.controller.abort();
    await b.done;
  });

  it("respects a Lease written in client-go's format and takes it over once the Go holder stops", async () => {
    const name = newLeaseName();
    const goTime = (): string => formatMicroTime(Date.now() * 1000 + 123);
    const acquireTime = '2026-01-02T03:04:05.678901Z';
    await leases().create({
      metadata: { namespace: namespace.name, name } as unknown as RawLease['metadata'],
      spec: {
        holderIdentity: 'go-candidate',
        leaseDurationSeconds: 2,
        acquireTime,
        renewTime: goTime(),
        leaseTransitions: 7,
      },
    });

    // The Go holder renews every 500 ms for 4 s (two lease durations) with merge patches of renewTime.
    const ours = candidate(name, 'ts-candidate');
    for (let i = 0; i < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await leases().patch({ namespace: namespace.name, name }, { merge: { spec: { renewTime: goTime() } } });
      assert.equal(ours.elector.isLeader(), false, 'took a lease the Go holder keeps renewing');
    }
    assert.equal(ours.elector.getLeader(), 'go-candidate');
    assert.deepEqual(ours.events, ['leader:go-candidate']);
    const lastGoRenewal = (await readLease(name)).spec.renewTime ?? '';

    await eventually(
      () => {
        assert.equal(ours.elector.isLeader(), true);
      },
      { timeoutMs: 10_000 },
    );
    const taken = await readLease(name);
    assert.equal(taken.spec.holderIdentity, 'ts-candidate');
    assert.equal(taken.spec.leaseTransitions, 8);
    assert.match(taken.spec.acquireTime ?? '', MICRO_TIME);
    assert.notEqual(taken.spec.acquireTime, acquireTime);
    assert.ok(parseMicroTime(taken.spec.acquireTime ?? '') - parseMicroTime(lastGoRenewal) >= 2_000_000);
    ours.controller.abort();
    await ours.done;
  });
});
