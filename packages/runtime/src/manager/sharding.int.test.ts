/**
 * Three sharded Managers in this process, one ring, one controller over ConfigMaps, short durations:
 * every ConfigMap is reconciled, never by two Managers at once, and after one Manager stops gracefully
 * the other two reconcile everything, old and new; a Manager whose member Lease is deleted under it
 * ends `'lost-leadership'`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import winston from 'winston';
import { Controller } from '../controller/controller.ts';
import { memberLeaseName } from '../sharding/member-lease.ts';
import { Manager, type ManagerExit } from './manager.ts';

const silent = winston.createLogger({ silent: true });
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const SUITE = 'manager-sharding';
/** Long enough that two Managers reconciling one key at once would overlap. */
const RECONCILE_MS = 20;

interface Reconcile {
  key: string;
  manager: string;
  /** `data.v` of the object the reconcile saw. */
  v: string | undefined;
  start: number;
  end: number;
}

interface Running {
  identity: string;
  abort: AbortController;
  done: Promise<ManagerExit>;
}

describe('sharded Managers on a real API server', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: TestNamespace;
  const reconciles: Reconcile[] = [];
  const managers: Running[] = [];

  function startManager(index: number): Running {
    const identity = `sharded-${index}-${randomUUID().slice(0, 8)}`;
    const manager = new Manager({
      kubeConfig: kc,
      logger: silent,
      health: false,
      identity,
      gracefulShutdownTimeoutMs: 5_000,
      sharding: {
        namespace: ns.name,
        ring: 'configmaps',
        // Short, for a quick test, but with room for a loaded machine: a renewal that takes longer than
        // the renew deadline loses the member (the test would see 'lost-leadership').
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_500,
        retryPeriodMs: 500,
      },
    });
    manager.add(
      new Controller<V1ConfigMap>({
        name: 'configmaps',
        for: {
          group: '',
          version: 'v1',
          plural: 'configmaps',
          kind: 'ConfigMap',
          namespace: ns.name,
          labelSelector: `suite=${SUITE}`,
        },
        maxConcurrentReconciles: 4,
        reconcile: async ({ key, object }) => {
          const start = performance.now();
          await new Promise((resolve) => setTimeout(resolve, RECONCILE_MS));
          reconciles.push({ key, manager: identity, v: object?.data?.v, start, end: performance.now() });
        },
      }),
    );
    const abort = new AbortController();
    return { identity, abort, done: manager.start(abort.signal) };
  }

  const keyOf = (i: number) => `${ns.name}/cm-${i}`;
  const create = (i: number) =>
    core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: `cm-${i}`, labels: { suite: SUITE } }, data: { v: '1' } },
    });

  /** Every pair of reconciles of one key by two Managers whose intervals overlap. */
  function overlaps(): string[] {
    const found: string[] = [];
    const byKey = Map.groupBy(reconciles, (r) => r.key);
    for (const [key, list] of byKey)
      for (const [i, r] of list.entries())
        for (const s of list.slice(i + 1))
          if (r.manager !== s.manager && r.start < s.end && s.start < r.end)
            found.push(`${key}: ${r.manager} and ${s.manager}`);
    return found;
  }

  before(async () => {
    kc = loadTestKubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(kc, 'manager-sharding');
  });
  after(async () => {
    for (const m of managers) m.abort.abort();
    await Promise.allSettled(managers.map((m) => m.done));
    await ns.cleanup();
  });

  it('refuses sharding with leader election, and a ring that is no label value, at construction', () => {
    const sharding = { namespace: ns.name, ring: 'configmaps' };
    const options = { kubeConfig: kc, logger: silent, health: false as const };
    assert.throws(
      () => new Manager({ ...options, sharding, leaderElection: { namespace: ns.name, leaseName: 'x' } }),
      { name: 'ShardingConfigError', message: /sharding and leaderElection exclude each other/ },
    );
    assert.throws(() => new Manager({ ...options, sharding: { ...sharding, ring: 'not a label' } }), {
      name: 'ShardingConfigError',
    });
  });

  it('reconciles every ConfigMap, never in two Managers at once; the survivors take over a stopped one', async () => {
    for (let i = 0; i < 3; i++) managers.push(startManager(i));
    for (let i = 0; i < 60; i++) await create(i);
    await eventually(
      () => {
        const seen = new Set(reconciles.filter((r) => r.v === '1').map((r) => r.key));
        for (let i = 0; i < 60; i++) assert.ok(seen.has(keyOf(i)), `${keyOf(i)} reconciled`);
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(overlaps(), []);
    const firstPhase = reconciles.length;
    const perManager = Map.groupBy(reconciles, (r) => r.manager);
    assert.ok(perManager.size > 1, 'the work is shared');

    const [stopped, ...survivors] = managers as [Running, ...Running[]];
    stopped.abort.abort();
    assert.equal(await stopped.done, 'stopped');
    const stoppedAt = performance.now();

    for (let i = 60; i < 80; i++) await create(i);
    for (let i = 0; i < 60; i += 3)
      await core.patchNamespacedConfigMap(
        { name: `cm-${i}`, namespace: ns.name, body: { data: { v: '2' } } },
        mergePatch,
      );
    const survivorIds = new Set(survivors.map((m) => m.identity));
    await eventually(
      () => {
        const after = reconciles.filter((r) => r.start > stoppedAt && survivorIds.has(r.manager));
        const created = new Set(after.filter((r) => r.v === '1').map((r) => r.key));
        const touched = new Set(after.filter((r) => r.v === '2').map((r) => r.key));
        for (let i = 60; i < 80; i++) assert.ok(created.has(keyOf(i)), `${keyOf(i)} reconciled`);
        for (let i = 0; i < 60; i += 3) assert.ok(touched.has(keyOf(i)), `${keyOf(i)} reconciled again`);
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(
      reconciles.filter((r) => r.manager === stopped.identity && r.end > stoppedAt),
      [],
      'the stopped Manager reconciles nothing more',
    );
    assert.deepEqual(overlaps(), []);
    const counts = Object.fromEntries(
      [...Map.groupBy(reconciles, (r) => r.manager)].map(([id, list]) => [id, list.length]),
    );
    console.log('reconciles', { firstPhase, total: reconciles.length, perManager: counts });

    const [robbed, last] = survivors as [Running, Running];
    await kc
      .makeApiClient(CoordinationV1Api)
      .deleteNamespacedLease({ name: memberLeaseName('configmaps', robbed.identity), namespace: ns.name });
    assert.equal(await robbed.done, 'lost-leadership');
    last.abort.abort();
    assert.equal(await last.done, 'stopped');
  });
});
