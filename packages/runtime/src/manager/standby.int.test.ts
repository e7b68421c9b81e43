/**
 * Warm and cold standbys on a real API server: two Managers on one Lease, the second waiting.
 *
 * Whether a standby has listed or watched is read from its informers' state and metrics: an informer
 * sends its first request when it starts, the `loopwright_informer_*` series of its resource exist from
 * that start, and `lastSyncResourceVersion` is set by the first list's answer.
 */
import { CoordinationV1Api, CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import type { Informer, KubeObject } from '@loopwright/informer';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { Controller } from '../controller/controller.ts';
import { CacheSyncTimeoutError, Manager, type ManagerExit, type ManagerOptions } from './manager.ts';

const silent = winston.createLogger({ silent: true });
// Short but valid durations: lease > renew deadline > 1.2 x retry.
const fast = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 400 };
const OBJECTS = 5;

interface Replica {
  manager: Manager;
  /** `name` of every ConfigMap this replica reconciled. */
  reconciled: Set<string>;
  done: Promise<ManagerExit>;
  stop(): Promise<ManagerExit>;
}

describe('Manager standbys on a real API server', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;

  before(async () => {
    kc = loadTestKubeConfig();
    ns = await createTestNamespace(kc, 'standby');
  });
  after(() => ns.cleanup());

  function replica(
    identity: string,
    suite: string,
    options: Partial<ManagerOptions> & { fieldSelector?: string } = {},
  ): Replica {
    const { fieldSelector, ...managerOptions } = options;
    const manager = new Manager({
      kubeConfig: kc,
      logger: silent,
      health: { port: 0, host: '127.0.0.1' },
      leaderElection: { namespace: ns.name, leaseName: suite, identity, ...fast },
      gracefulShutdownTimeoutMs: 2000,
      ...managerOptions,
    });
    const reconciled = new Set<string>();
    manager.add(
      new Controller<V1ConfigMap>({
        name: `cm-${suite}`,
        for: {
          group: '',
          version: 'v1',
          plural: 'configmaps',
          kind: 'ConfigMap',
          namespace: ns.name,
          labelSelector: `suite=${suite}`,
          ...(fieldSelector === undefined ? {} : { fieldSelector }),
        },
        reconcile: ({ name }) => {
          reconciled.add(name);
          return Promise.resolve();
        },
      }),
    );
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    return { manager, reconciled, done, stop: () => (abort.abort(), done) };
  }

  async function createConfigMaps(suite: string): Promise<string[]> {
    const names = Array.from({ length: OBJECTS }, (_, i) => `${suite}-${i}`);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of names)
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name, labels: { suite } } },
      });
    return names;
  }

  async function holder(leaseName: string): Promise<string | undefined> {
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: leaseName, namespace: ns.name });
    return lease.spec?.holderIdentity;
  }

  async function readyz(manager: Manager): Promise<number> {
    return (await fetch(`http://127.0.0.1:${String(manager.healthPort)}/readyz`)).status;
  }

  /** The manager's one informer, found among those not synced yet (a cold standby's, before it leads). */
  function unsyncedInformer(manager: Manager): Informer<KubeObject> {
    const [informer, ...others] = manager.factory.unsyncedInformers();
    assert.ok(informer, 'the informer is requested but has not synced');
    assert.equal(others.length, 0);
    return informer;
  }

  /** Whether the manager's informer metrics have a series for ConfigMaps: they start with the informer. */
  async function informerStarted(manager: Manager): Promise<boolean> {
    const exposition = await manager.metrics.registry.metrics();
    return /^loopwright_informer_\w+\{[^}]*resource="configmaps"[^}]*\} /m.test(exposition);
  }

  /** Waits until `replica` has tried the Lease several times and seen `leader` hold it. */
  async function waitingBehind(standby: Replica, suite: string, leader: string): Promise<void> {
    await eventually(
      async () => {
        assert.equal(await readyz(standby.manager), 200);
        const exposition = await standby.manager.metrics.registry.metrics();
        assert.match(exposition, new RegExp(`^leader_election_master_status\\{name="${suite}"\\} 0$`, 'm'));
        const gets = /^rest_client_requests_total\{code="200",method="GET"[^}]*\} (\d+)$/m.exec(exposition);
        assert.ok(Number(gets?.[1] ?? 0) >= 3, 'several reads of the Lease');
      },
      { timeoutMs: 15_000 },
    );
    assert.equal(await holder(suite), leader);
  }

  it('a cold standby lists nothing while it waits, is ready, then lists and reconciles what exists once it leads', async () => {
    const leader = replica('leader', 'cold');
    await eventually(async () => {
      assert.equal(await holder('cold'), 'leader');
    });
    const names = await createConfigMaps('cold');
    await eventually(() => {
      assert.equal(leader.reconciled.size, OBJECTS);
    });

    const standby = replica('standby', 'cold', { warmStandby: false });
    await waitingBehind(standby, 'cold', 'leader');
    const informer = unsyncedInformer(standby.manager);
    assert.equal(informer.lastSyncResourceVersion, undefined, 'no list was answered');
    assert.equal(informer.lister.list().length, 0);
    assert.equal(await informerStarted(standby.manager), false, 'the informer never started');
    assert.equal(standby.reconciled.size, 0);

    assert.equal(await leader.stop(), 'stopped');
    await eventually(
      () => {
        assert.deepEqual([...standby.reconciled].sort(), names);
      },
      { timeoutMs: 15_000 },
    );
    assert.equal(await holder('cold'), 'standby');
    assert.ok(informer.hasSynced());
    assert.notEqual(informer.lastSyncResourceVersion, undefined);
    assert.equal(await informerStarted(standby.manager), true);
    assert.equal(await readyz(standby.manager), 200);
    assert.equal(await standby.stop(), 'stopped');
  });

  it('a warm standby has every object cached before it leads, and reconciles them once it does', async () => {
    const leader = replica('leader', 'warm');
    await eventually(async () => {
      assert.equal(await holder('warm'), 'leader');
    });
    const names = await createConfigMaps('warm');

    const standby = replica('standby', 'warm', { warmStandby: true });
    await waitingBehind(standby, 'warm', 'leader');
    assert.deepEqual(standby.manager.factory.unsyncedInformers(), []);
    assert.equal(await informerStarted(standby.manager), true);
    const cached = standby.manager.factory
      .forResource<V1ConfigMap>({
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=warm',
      })
      .lister.list()
      .map((cm) => cm.metadata?.name ?? '');
    assert.deepEqual(cached.sort(), names);
    assert.equal(standby.reconciled.size, 0, 'a standby reconciles nothing');

    assert.equal(await leader.stop(), 'stopped');
    await eventually(
      () => {
        assert.deepEqual([...standby.reconciled].sort(), names);
      },
      { timeoutMs: 15_000 },
    );
    assert.equal(await standby.stop(), 'stopped');
  });

  it('a cold leader whose caches do not sync in time releases the Lease and fails, having reconciled nothing', async () => {
    await createConfigMaps('unsyncable');
    // The API server refuses this field selector (400): the list is retried and never succeeds.
    const cold = replica('cold', 'unsyncable', {
      warmStandby: false,
      cacheSyncTimeoutMs: 1000,
      fieldSelector: 'spec.unknown=x',
    });
    await assert.rejects(cold.done, CacheSyncTimeoutError);
    assert.equal(cold.reconciled.size, 0);
    assert.equal(await holder('unsyncable'), '', 'released, so a standby takes over at once');
  });
});
