import {
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { Controller } from '../controller/controller.ts';
import { GracefulShutdownTimeoutError, Manager, type ManagerExit, type ManagerOptions } from './manager.ts';

const silent = winston.createLogger({ silent: true });
// Short but valid durations: lease > renew deadline > 1.2 x retry.
const fast = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 400 };

interface Replica {
  identity: string;
  manager: Manager;
  done: Promise<ManagerExit>;
  stop(): Promise<ManagerExit>;
}

describe('Manager with leader election on a real API server', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;
  const reconciledBy: string[] = [];

  before(async () => {
    kc = loadTestKubeConfig();
    ns = await createTestNamespace(kc, 'manager');
  });
  after(() => ns.cleanup());

  function replica(identity: string, leaseName: string): Replica {
    const manager = new Manager({
      kubeConfig: kc,
      logger: silent,
      health: { port: 0, host: '127.0.0.1' },
      leaderElection: { namespace: ns.name, leaseName, identity, ...fast },
      gracefulShutdownTimeoutMs: 2000,
    });
    manager.add(
      new Controller<V1ConfigMap>({
        name: `cm-${identity}`,
        for: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespace: ns.name },
        reconcile: ({ name }) => {
          reconciledBy.push(`${identity}:${name}`);
          return Promise.resolve();
        },
      }),
    );
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    return { identity, manager, done, stop: () => (abort.abort(), done) };
  }

  async function holder(leaseName: string): Promise<string | undefined> {
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: leaseName, namespace: ns.name });
    return lease.spec?.holderIdentity;
  }

  async function readyz(manager: Manager): Promise<number> {
    return (await fetch(`http://127.0.0.1:${manager.healthPort}/readyz`)).status;
  }

  it('runs controllers only on the leader, and hands over at once on graceful shutdown', async () => {
    const a = replica('a', 'handover');
    await eventually(async () => {
      assert.equal(await holder('handover'), 'a');
    });
    const b = replica('b', 'handover');
    await eventually(
      async () => {
        assert.equal(await readyz(b.manager), 200);
      },
      { timeoutMs: 15_000 },
    );
    assert.equal(await readyz(a.manager), 200);

    await kc
      .makeApiClient(CoreV1Api)
      .createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'first' } } });
    await eventually(() => {
      assert.ok(reconciledBy.includes('a:first'));
    });
    assert.ok(!reconciledBy.some((r) => r.startsWith('b:')), 'the standby reconciles nothing');

    const stoppedAt = Date.now();
    assert.equal(await a.stop(), 'stopped');
    await eventually(
      async () => {
        assert.equal(await holder('handover'), 'b');
      },
      { timeoutMs: 10_000 },
    );
    // A released lease (1 s) is taken within about a retry period, well before the 3 s lease expires.
    assert.ok(Date.now() - stoppedAt < fast.leaseDurationMs, `took over after ${Date.now() - stoppedAt} ms`);
    await eventually(
      () => {
        assert.ok(reconciledBy.includes('b:first'));
      },
      { timeoutMs: 10_000 },
    );
    // Informer lists/watches and Lease renewals bypass the KubeClient but count in rest_client_*.
    const requests =
      (await b.manager.metrics.registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    const count = (method: string, code: string): number =>
      requests
        .filter((v) => v.labels.method === method && v.labels.code === code)
        .reduce((sum, v) => sum + v.value, 0);
    assert.ok(count('GET', '200') >= 2, 'lists, watches and Lease reads are counted');
    assert.ok(count('PUT', '200') >= 1, 'Lease acquisitions and renewals are counted');
    assert.equal(await b.stop(), 'stopped');
  });

  /** A manager whose one controller blocks every reconcile of ConfigMaps labelled `suite` until released. */
  function stuckManager(suite: string, leaseName?: string) {
    let release = (): void => undefined;
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    const state = { started: false, release };
    const manager = new Manager({
      kubeConfig: kc,
      logger: silent,
      health: false,
      ...(leaseName === undefined
        ? {}
        : { leaderElection: { namespace: ns.name, leaseName, identity: suite, ...fast } }),
      gracefulShutdownTimeoutMs: 300,
    });
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
        },
        // Ignores the shutdown signal, as a reconcile stuck in a slow call would.
        reconcile: async () => {
          state.started = true;
          await blocked;
        },
      }),
    );
    return { manager, state };
  }

  it('keeps the Lease and fails when reconciles outlive the graceful shutdown timeout', async () => {
    const { manager, state } = stuckManager('stuck', 'stuck');
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    try {
      await eventually(async () => {
        assert.equal(await holder('stuck'), 'stuck');
      });
      await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'stuck', labels: { suite: 'stuck' } } },
      });
      await eventually(() => {
        assert.ok(state.started);
      });
      abort.abort();
      await assert.rejects(done, GracefulShutdownTimeoutError);
      // Released, a standby would start reconciling while this reconcile may still write.
      assert.equal(await holder('stuck'), 'stuck', 'the Lease is left to expire');
    } finally {
      state.release();
    }
  });

  it('fails without leader election too when reconciles outlive the graceful shutdown timeout', async () => {
    const { manager, state } = stuckManager('stuck-alone');
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    try {
      await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'stuck-alone', labels: { suite: 'stuck-alone' } } },
      });
      await eventually(() => {
        assert.ok(state.started);
      });
      abort.abort();
      await assert.rejects(done, GracefulShutdownTimeoutError);
    } finally {
      state.release();
    }
  });

  it('reports lost leadership when another holder takes the Lease', async () => {
    const a = replica('loser', 'stolen');
    await eventually(async () => {
      assert.equal(await holder('stolen'), 'loser');
    });
    const coordination = kc.makeApiClient(CoordinationV1Api);
    // Another candidate (say, a Go one after a partition) wrote itself in with a long lease.
    await coordination.patchNamespacedLease(
      {
        name: 'stolen',
        namespace: ns.name,
        body: { spec: { holderIdentity: 'intruder', leaseDurationSeconds: 60 } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(await a.done, 'lost-leadership');
  });
});

describe('Manager cache: what reconcilers get', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;

  before(async () => {
    kc = loadTestKubeConfig();
    ns = await createTestNamespace(kc, 'manager-cache');
  });
  after(() => ns.cleanup());

  /** Creates a ConfigMap and returns it as a controller of a manager with `options` is handed it. */
  async function reconciled(name: string, options: Partial<ManagerOptions>): Promise<V1ConfigMap> {
    const created = await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: ns.name,
      body: {
        metadata: {
          name,
          labels: { app: 'web' },
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"ConfigMap"}' },
        },
        data: { key: 'value' },
      },
    });
    assert.ok((created.metadata?.managedFields?.length ?? 0) > 0, 'the API server records managedFields');
    let seen: V1ConfigMap | undefined;
    const manager = new Manager({ kubeConfig: kc, logger: silent, health: false, ...options });
    manager.add(
      new Controller<V1ConfigMap>({
        name: `cm-${name}`,
        for: {
          group: '',
          version: 'v1',
          plural: 'configmaps',
          kind: 'ConfigMap',
          namespace: ns.name,
          fieldSelector: `metadata.name=${name}`,
        },
        reconcile: ({ object }) => {
          seen = object;
          return Promise.resolve();
        },
      }),
    );
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    try {
      await eventually(() => {
        assert.ok(seen);
      });
    } finally {
      abort.abort();
      assert.equal(await done, 'stopped');
    }
    assert.ok(seen);
    return seen;
  }

  it('strips managedFields by default and keeps everything else', async () => {
    const object = await reconciled('stripped', {});
    const metadata = object.metadata;
    assert.ok(metadata);
    assert.ok(!('managedFields' in metadata));
    assert.equal(object.apiVersion, 'v1');
    assert.equal(object.kind, 'ConfigMap');
    assert.match(metadata.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.match(metadata.resourceVersion ?? '', /^\d+$/);
    assert.deepEqual(metadata.labels, { app: 'web' });
    assert.deepEqual(metadata.annotations, {
      'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"ConfigMap"}',
    });
    assert.deepEqual(object.data, { key: 'value' });
  });

  it('caches objects as the API server sends them with an identity cacheTransform', async () => {
    const object = await reconciled('kept', { cacheTransform: (obj) => obj });
    assert.ok((object.metadata?.managedFields?.length ?? 0) > 0);
  });
});

describe('Manager client', () => {
  it('writes as the fieldManager it was given', async () => {
    const kc = loadTestKubeConfig();
    const ns = await createTestNamespace(kc, 'manager-client');
    const manager = new Manager({ kubeConfig: kc, logger: silent, health: false, fieldManager: 'cm-writer' });
    try {
      const configMaps = manager.client.resource<V1ConfigMap>({
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespaced: true,
      });
      const created = await configMaps.create({
        metadata: { namespace: ns.name, name: 'owned' },
        data: { key: 'value' },
      });
      assert.deepEqual(
        created.metadata?.managedFields?.map((entry) => entry.manager),
        ['cm-writer'],
      );
    } finally {
      await manager.client.close();
      await ns.cleanup();
    }
  });
});

describe('Manager Event recorders', () => {
  it('count every Event they drop in loopwright_events_dropped_total, by cause', async () => {
    const manager = new Manager({ kubeConfig: loadTestKubeConfig(), logger: silent, health: false });
    const recorder = manager.eventRecorder('loopwright.dev/test');
    await recorder.close();
    recorder.event(
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'late' },
      { type: 'Normal', reason: 'Late', action: 'Test' },
    );
    const exposition = await manager.metrics.registry.metrics();
    assert.match(exposition, /^loopwright_events_dropped_total\{cause="closed"\} 1$/m);
    assert.match(exposition, /^loopwright_events_dropped_total\{cause="queue-full"\} 0$/m);
    await manager.client.close();
  });
});
