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
    const state: { started: boolean; release: () => void; signal?: AbortSignal; abortedAt?: number } = {
      started: false,
      release,
    };
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
        // Ignores its signal, as a reconcile stuck in a slow call would.
        reconcile: async ({ signal }) => {
          state.started = true;
          state.signal = signal;
          signal.addEventListener('abort', () => (state.abortedAt = Date.now()), { once: true });
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
      const stoppedAt = Date.now();
      abort.abort();
      // A graceful stop ends intake only: the reconcile in hand keeps its signal...
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(state.signal?.aborted, false, 'the stop aborted the reconcile in hand');
      await assert.rejects(done, GracefulShutdownTimeoutError);
      // ...until it outlives the graceful shutdown timeout (300 ms): then it is told to stop.
      assert.ok(state.signal.aborted, 'the reconcile outlived the timeout and was not aborted');
      assert.ok(
        (state.abortedAt ?? 0) - stoppedAt >= 300,
        `aborted ${(state.abortedAt ?? 0) - stoppedAt} ms after the stop`,
      );
      assert.ok(state.signal.reason instanceof GracefulShutdownTimeoutError, String(state.signal.reason));
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

  it('aborts the reconcile in hand at once when leadership is lost', async () => {
    const { manager, state } = stuckManager('stuck-lost', 'stuck-lost');
    const done = manager.start(new AbortController().signal);
    try {
      await eventually(async () => {
        assert.equal(await holder('stuck-lost'), 'stuck-lost');
      });
      await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'stuck-lost', labels: { suite: 'stuck-lost' } } },
      });
      await eventually(() => {
        assert.ok(state.started);
      });
      assert.equal(state.signal?.aborted, false);
      await kc.makeApiClient(CoordinationV1Api).patchNamespacedLease(
        {
          name: 'stuck-lost',
          namespace: ns.name,
          body: { spec: { holderIdentity: 'intruder', leaseDurationSeconds: 60 } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      assert.equal(await done, 'lost-leadership');
      // Another replica may lead now: this one's reconcile is told to stop, not left to finish.
      assert.equal(state.signal.aborted, true, 'the reconcile in hand was not aborted');
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
