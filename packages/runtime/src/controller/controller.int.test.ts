import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { createMetrics } from '@loopwright/metrics';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { TerminalError } from '../errors/index.ts';
import { Manager } from '../manager/manager.ts';
import { Controller, type ControllerOptions } from './controller.ts';
import type { ReconcileRequest, ReconcileResult } from './types.ts';

const silent = winston.createLogger({ silent: true });

interface Seen {
  key: string;
  exists: boolean;
  data: Record<string, string> | undefined;
  at: number;
}

/** Runs one controller in a manager (no leader election, no health server) until `stop()`. */
function runController(
  kc: KubeConfig,
  options: Omit<ControllerOptions<V1ConfigMap>, 'name'> & { name?: string },
) {
  const metrics = createMetrics();
  const manager = new Manager({
    kubeConfig: kc,
    logger: silent,
    metrics,
    health: false,
    gracefulShutdownTimeoutMs: 5000,
  });
  manager.add(new Controller<V1ConfigMap>({ name: options.name ?? 'test', ...options }));
  const abort = new AbortController();
  const done = manager.start(abort.signal);
  return {
    metrics,
    done,
    stop: async () => {
      abort.abort();
      return done;
    },
  };
}

async function counter(
  metrics: ReturnType<typeof createMetrics>,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  const sample = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return sample?.value ?? 0;
}

describe('Controller on a real API server', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: TestNamespace;

  before(async () => {
    kc = loadTestKubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(kc, 'controller');
  });
  after(() => ns.cleanup());

  it('reconciles on create, update and delete, reading the object from the cache', async () => {
    const seen: Seen[] = [];
    const run = runController(kc, {
      for: {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=basic',
      },
      reconcile: async ({ key, object }) => {
        seen.push({ key, exists: object !== undefined, data: object?.data, at: Date.now() });
        return Promise.resolve();
      },
    });
    try {
      const metadata = { name: 'basic', labels: { suite: 'basic' } };
      await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata, data: { v: '1' } } });
      await eventually(() => {
        assert.ok(seen.some((s) => s.key === `${ns.name}/basic` && s.data?.v === '1'));
      });
      await core.replaceNamespacedConfigMap({
        name: 'basic',
        namespace: ns.name,
        body: { metadata, data: { v: '2' } },
      });
      await eventually(() => {
        assert.ok(seen.some((s) => s.data?.v === '2'));
      });
      await core.deleteNamespacedConfigMap({ name: 'basic', namespace: ns.name });
      await eventually(() => {
        assert.ok(
          seen.some((s) => !s.exists),
          JSON.stringify(seen),
        );
      });
    } finally {
      assert.equal(await run.stop(), 'stopped');
    }
    assert.ok(
      (await counter(run.metrics, 'controller_runtime_reconcile_total', {
        controller: 'test',
        result: 'success',
      })) >= 3,
    );
  });

  it('reconciles the controller owner when an owned object changes', async () => {
    const seen: string[] = [];
    const run = runController(kc, {
      for: {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=owner',
      },
      owns: [{ group: '', version: 'v1', plural: 'secrets', namespace: ns.name }],
      reconcile: ({ key }) => {
        seen.push(key);
        return Promise.resolve();
      },
    });
    try {
      const owner = await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'owner', labels: { suite: 'owner' } } },
      });
      await eventually(() => {
        assert.ok(seen.includes(`${ns.name}/owner`));
      });
      seen.length = 0;
      const ownerRef = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'owner',
        uid: owner.metadata?.uid ?? '',
        controller: true,
      };
      await core.createNamespacedSecret({
        namespace: ns.name,
        body: { metadata: { name: 'owned', ownerReferences: [ownerRef] }, stringData: { a: 'b' } },
      });
      await core.createNamespacedSecret({
        namespace: ns.name,
        body: { metadata: { name: 'unowned' }, stringData: { a: 'b' } },
      });
      await eventually(() => {
        assert.deepEqual(seen, [`${ns.name}/owner`]);
      });
    } finally {
      await run.stop();
    }
  });

  it('retries a failing reconcile with backoff until it succeeds, and forgets a terminal error', async () => {
    const attempts = new Map<string, number[]>();
    const run = runController(kc, {
      name: 'flaky',
      for: {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=retry',
      },
      reconcile: async ({ name }: ReconcileRequest<V1ConfigMap>): Promise<ReconcileResult> => {
        const times = [...(attempts.get(name) ?? []), Date.now()];
        attempts.set(name, times);
        if (name === 'terminal') throw new TerminalError('this input can never work');
        // A real API error: the namespace does not exist until the third attempt.
        if (times.length < 3) await core.readNamespace({ name: `${ns.name}-missing` });
        return undefined;
      },
    });
    try {
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'flaky', labels: { suite: 'retry' } } },
      });
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'terminal', labels: { suite: 'retry' } } },
      });
      await eventually(() => {
        assert.equal(attempts.get('flaky')?.length, 3);
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(attempts.get('flaky')?.length, 3, 'no reconcile after success');
      assert.equal(attempts.get('terminal')?.length, 1, 'a terminal error is not retried');
      const [first = 0, second = 0, third = 0] = attempts.get('flaky') ?? [];
      // The default limiter waits 5 ms, then 10 ms: lower bounds hold whatever the API latency.
      assert.ok(
        second - first >= 5 && third - second >= 10,
        `retried after ${second - first} ms, then ${third - second} ms`,
      );
    } finally {
      await run.stop();
    }
    assert.equal(
      await counter(run.metrics, 'controller_runtime_reconcile_errors_total', { controller: 'flaky' }),
      3,
    );
    assert.equal(
      await counter(run.metrics, 'controller_runtime_terminal_reconcile_errors_total', {
        controller: 'flaky',
      }),
      1,
    );
    assert.equal(
      await counter(run.metrics, 'controller_runtime_reconcile_total', {
        controller: 'flaky',
        result: 'success',
      }),
      1,
    );
    assert.equal(await counter(run.metrics, 'workqueue_retries_total', { name: 'flaky' }), 2);
  });

  it('wakes up after requeueAfterMs without any event', async () => {
    const times: number[] = [];
    const run = runController(kc, {
      for: {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=requeue',
      },
      reconcile: () => {
        times.push(Date.now());
        return Promise.resolve(times.length === 1 ? { requeueAfterMs: 400 } : undefined);
      },
    });
    try {
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'later', labels: { suite: 'requeue' } } },
      });
      await eventually(() => {
        assert.equal(times.length, 2);
      });
      const [first = 0, second = 0] = times;
      assert.ok(second - first >= 400, `woke after ${second - first} ms`);
    } finally {
      await run.stop();
    }
  });

  it('lets an in-flight reconcile finish before shutdown completes', async () => {
    let finished = false;
    let started = false;
    const run = runController(kc, {
      for: {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=drain',
      },
      reconcile: async ({ signal }) => {
        started = true;
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.ok(signal.aborted, 'the reconcile sees the shutdown signal');
        finished = true;
      },
    });
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'slow', labels: { suite: 'drain' } } },
    });
    await eventually(() => {
      assert.ok(started);
    });
    assert.equal(await run.stop(), 'stopped');
    assert.ok(finished, 'stop() resolved only after the reconcile finished');
  });
  it('stops taking queued keys on shutdown: only the reconcile in hand finishes', async () => {
    const reconciled: string[] = [];
    let releaseFirst = (): void => undefined;
    const firstBlocked = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const run = runController(kc, {
      for: {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=intake',
      },
      reconcile: async ({ name }) => {
        reconciled.push(name);
        if (name === 'intake-a') await firstBlocked;
      },
    });
    const create = (name: string) =>
      core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name, labels: { suite: 'intake' } } },
      });
    await create('intake-a');
    await eventually(() => {
      assert.deepEqual(reconciled, ['intake-a']);
    });
    await create('intake-b');
    await create('intake-c');
    await eventually(async () => {
      assert.equal(await counter(run.metrics, 'workqueue_depth', { name: 'test' }), 2);
    });
    const stopped = run.stop();
    releaseFirst();
    assert.equal(await stopped, 'stopped');
    assert.deepEqual(reconciled, ['intake-a'], 'keys still queued at shutdown are left alone');
  });
});
