import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ConfigMap,
  type V1Secret,
  type V1Service,
} from '@kubernetes/client-node';
import type { KubeObject, ListWatchScope } from '@loopwright/informer';
import { createMetrics } from '@loopwright/metrics';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import winston, { type Logger } from 'winston';
import { createLogger } from '../log/index.ts';
import { TerminalError } from '../errors/index.ts';
import { Manager } from '../manager/manager.ts';
import { NORMAL_PRIORITY } from '@loopwright/workqueue';
import { Controller, type ControllerOptions } from './controller.ts';
import { annotationsChanged, ignoreStatusOnlyUpdates, labelsChanged, type Predicate } from './predicates.ts';
import type { ReconcileRequest, ReconcileResult } from './types.ts';

const silent = winston.createLogger({ silent: true });

interface Seen {
  key: string;
  exists: boolean;
  data: Record<string, string> | undefined;
  at: number;
}

/** Runs one controller in a manager (no leader election, no health server) until `stop()`. */
function runController<T extends KubeObject = V1ConfigMap>(
  kc: KubeConfig,
  options: Omit<ControllerOptions<T>, 'name'> & { name?: string },
  logger: Logger = silent,
  managerOptions: { reconcileTimeoutMs?: number } = {},
) {
  const metrics = createMetrics();
  const manager = new Manager({
    kubeConfig: kc,
    logger,
    metrics,
    health: false,
    gracefulShutdownTimeoutMs: 5000,
    ...managerOptions,
  });
  manager.add(new Controller<T>({ name: options.name ?? 'test', ...options }));
  const abort = new AbortController();
  const done = manager.start(abort.signal);
  return {
    metrics,
    /** Sees every event of `scope` right after the controller's handlers, on the same shared informer. */
    witness: (scope: ListWatchScope) => {
      const seen: { type: 'add' | 'update' | 'delete'; obj: KubeObject }[] = [];
      manager.factory.forResource(scope).addEventHandler({
        onAdd: (obj) => seen.push({ type: 'add', obj }),
        onUpdate: (_oldObj, obj) => seen.push({ type: 'update', obj }),
        onDelete: (obj) => seen.push({ type: 'delete', obj }),
      });
      return seen;
    },
    done,
    stop: async () => {
      abort.abort();
      return done;
    },
  };
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A JSON logger, as in a cluster, whose entries land in `entries`. */
function capturingLogger() {
  const entries: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') entries.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ stream, format: 'json', level: 'error' }), entries };
}

async function counter(
  metrics: ReturnType<typeof createMetrics>,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  // The sum of the matching series: workqueue_depth has one per priority.
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  return (metric?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
    .reduce((sum, v) => sum + v.value, 0);
}

describe('Controller on a real API server', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: TestNamespace;

  /** The ConfigMaps of the test namespace labelled `suite=<suite>`: one test's primary resource. */
  const labelledConfigMaps = (suite: string) => ({
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespace: ns.name,
    labelSelector: `suite=${suite}`,
  });

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

  it("caches each watched scope through its own transform, after the Manager's", async () => {
    /** Keeps the metadata only: the scope's own transform. */
    const metadataOnly = <T extends KubeObject>(obj: T): T => ({ metadata: obj.metadata }) as T;
    const primary = {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespace: ns.name,
      labelSelector: 'suite=transform',
      transform: metadataOnly,
    };
    const ownedScope = {
      group: '',
      version: 'v1',
      plural: 'secrets',
      namespace: ns.name,
      labelSelector: 'suite=transform',
    };
    const reconciled: KubeObject[] = [];
    const run = runController(kc, {
      for: primary,
      owns: [{ ...ownedScope, transform: metadataOnly }],
      reconcile: ({ object }) => {
        if (object !== undefined) reconciled.push(object);
        return Promise.resolve();
      },
    });
    try {
      const owner = await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'transformed', labels: { suite: 'transform' } }, data: { a: 'b' } },
      });
      await core.createNamespacedSecret({
        namespace: ns.name,
        body: {
          metadata: {
            name: 'transformed',
            labels: { suite: 'transform' },
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                name: 'transformed',
                uid: owner.metadata?.uid ?? '',
                controller: true,
              },
            ],
          },
          stringData: { a: 'b' },
        },
      });
      const secrets = run.witness(ownedScope);
      await eventually(() => {
        assert.equal(secrets.length, 1);
        assert.ok(reconciled.length > 0);
      });
      for (const obj of [...reconciled, ...secrets.map(({ obj }) => obj)]) {
        assert.deepEqual(Object.keys(obj), ['metadata'], 'the own transform ran');
        assert.equal(obj.metadata?.managedFields, undefined, "the Manager's stripManagedFields ran too");
        assert.equal(obj.metadata?.name, 'transformed');
      }
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
    assert.equal(
      await counter(run.metrics, 'controller_runtime_reconcile_panics_total', { controller: 'flaky' }),
      0,
      'an API error is a failure, not a panic',
    );
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

  it('lets an in-flight reconcile finish before shutdown completes, its signal intact', async () => {
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
        // A stop ends intake; it does not cut the reconcile in hand short (see the README, "Shutdown").
        assert.equal(signal.aborted, false, 'the stop aborted the reconcile in hand');
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
  it('requeue: true (deprecated) adds the key again with the rate limiter, counted as requeue', async () => {
    const times: number[] = [];
    const run = runController(kc, {
      name: 'requeue-true',
      for: {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespace: ns.name,
        labelSelector: 'suite=requeue-true',
      },
      reconcile: () => {
        times.push(Date.now());
        return Promise.resolve(times.length < 3 ? { requeue: true } : undefined);
      },
    });
    try {
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'again', labels: { suite: 'requeue-true' } } },
      });
      // Without any event: only the queue can bring the key back.
      await eventually(() => {
        assert.equal(times.length, 3);
      });
      const [first = 0, second = 0, third = 0] = times;
      // The default limiter's per-key backoff: 5 ms, then 10 ms.
      assert.ok(
        second - first >= 5 && third - second >= 10,
        `requeued after ${second - first} ms, then ${third - second} ms`,
      );
    } finally {
      await run.stop();
    }
    const labels = { controller: 'requeue-true' };
    const total = (result: string) =>
      counter(run.metrics, 'controller_runtime_reconcile_total', { ...labels, result });
    assert.equal(await total('requeue'), 2);
    assert.equal(await total('success'), 1);
    assert.equal(await total('error'), 0);
    assert.equal(
      await counter(run.metrics, 'workqueue_retries_total', { name: 'requeue-true' }),
      2,
      'rate-limited adds',
    );
  });

  for (const usePriorityQueue of [true, false]) {
    it(`after a restart, a new object is reconciled ${usePriorityQueue ? 'before the backlog (priority queue)' : 'after the whole backlog (FIFO)'}`, async () => {
      const suite = `restart-${String(usePriorityQueue)}`;
      const existing = ['a', 'b', 'c', 'd', 'e'];
      for (const name of existing)
        await core.createNamespacedConfigMap({
          namespace: ns.name,
          body: { metadata: { name: `${suite}-${name}`, labels: { suite } } },
        });
      const order: string[] = [];
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const run = runController(kc, {
        name: suite,
        usePriorityQueue,
        for: labelledConfigMaps(suite),
        reconcile: async ({ name }) => {
          order.push(name.slice(suite.length + 1));
          // The first of the backlog holds the only worker until the new object is queued.
          if (order.length === 1) await gate;
        },
      });
      const witness = run.witness({
        group: '',
        version: 'v1',
        plural: 'configmaps',
        namespace: ns.name,
        labelSelector: `suite=${suite}`,
      });
      try {
        await eventually(() => {
          assert.equal(order.length, 1);
        });
        await core.createNamespacedConfigMap({
          namespace: ns.name,
          body: { metadata: { name: `${suite}-new`, labels: { suite } } },
        });
        await eventually(() => {
          assert.ok(witness.some((e) => e.type === 'add' && e.obj.metadata?.name === `${suite}-new`));
        });
        open();
        await eventually(() => {
          assert.equal(order.length, existing.length + 1);
        });
      } finally {
        open();
        await run.stop();
      }
      const [first, ...rest] = order;
      assert.ok(first !== 'new' && first !== undefined);
      const backlog = existing.filter((name) => name !== first);
      assert.deepEqual(rest, usePriorityQueue ? ['new', ...backlog] : [...backlog, 'new']);
    });
  }

  for (const named of [false, true]) {
    it(
      named
        ? 'a requeue at the priority its result names: a backlog key woken at normal priority goes before the rest of the backlog'
        : 'a requeue keeps the priority the key had: a backlog key requeued goes behind the rest of the backlog',
      async () => {
        const suite = `requeue-priority-${String(named)}`;
        for (const name of ['a', 'b', 'c'])
          await core.createNamespacedConfigMap({
            namespace: ns.name,
            body: { metadata: { name: `${suite}-${name}`, labels: { suite } } },
          });
        const order: string[] = [];
        const run = runController(kc, {
          name: suite,
          for: labelledConfigMaps(suite),
          reconcile: async ({ name }): Promise<ReconcileResult> => {
            order.push(name.slice(suite.length + 1));
            // Long enough for the first key's 1 ms requeue to be due while the others still wait.
            await new Promise((resolve) => setTimeout(resolve, 50));
            if (order.length > 1) return undefined;
            return named ? { requeueAfterMs: 1, priority: NORMAL_PRIORITY } : { requeueAfterMs: 1 };
          },
        });
        try {
          await eventually(() => {
            assert.equal(order.length, 4);
          });
        } finally {
          await run.stop();
        }
        // Listed in name order, all at low priority; 'b' is in hand when 'a' is due again. At normal
        // priority (controller-runtime's requeue, or the result's) 'a' comes straight back instead of last.
        assert.deepEqual(order, named ? ['a', 'b', 'a', 'c'] : ['a', 'b', 'c', 'a']);
      },
    );
  }

  it('times out a reconcile that ignores its signal: counted and logged when it passes, and the object waits until it returns', async () => {
    const { logger, entries } = capturingLogger();
    const calls: { data: string | undefined; signal: AbortSignal }[] = [];
    let running = 0;
    let mostAtOnce = 0;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const run = runController(
      kc,
      {
        name: 'stuck',
        reconcileTimeoutMs: 300,
        for: labelledConfigMaps('timeout-ignored'),
        reconcile: async ({ object, signal }) => {
          calls.push({ data: object?.data?.v, signal });
          mostAtOnce = Math.max(mostAtOnce, ++running);
          // The first reconcile ignores its signal, as a call without one would.
          if (calls.length === 1) await released;
          running--;
        },
      },
      logger,
    );
    const witness = run.witness({ group: '', version: 'v1', plural: 'configmaps', namespace: ns.name });
    const labels = { controller: 'stuck' };
    try {
      const metadata = { name: 'stuck', labels: { suite: 'timeout-ignored' } };
      await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata, data: { v: '1' } } });
      await eventually(async () => {
        assert.equal(await counter(run.metrics, 'controller_runtime_reconcile_timeouts_total', labels), 1);
      });
      const [first] = calls;
      assert.equal((first?.signal.reason as DOMException | undefined)?.name, 'TimeoutError');
      assert.equal(running, 1, 'counted while the reconcile still runs');
      // A change while the timed-out reconcile still runs: the object waits for it.
      await core.replaceNamespacedConfigMap({
        name: 'stuck',
        namespace: ns.name,
        body: { metadata, data: { v: '2' } },
      });
      await eventually(() => {
        assert.ok(witness.some((e) => e.type === 'update' && (e.obj as V1ConfigMap).data?.v === '2'));
      });
      assert.equal(calls.length, 1, 'no second reconcile while the first runs');
      release();
      await eventually(() => {
        assert.deepEqual(
          calls.map((c) => c.data),
          ['1', '2'],
        );
      });
      assert.equal(calls[1]?.signal.aborted, false, 'the next reconcile has a fresh timeout');
    } finally {
      release();
      await run.stop();
    }
    assert.equal(mostAtOnce, 1);
    assert.equal(await counter(run.metrics, 'controller_runtime_reconcile_timeouts_total', labels), 1);
    // It returned without an error after its timeout: a success, as controller-runtime counts it.
    assert.equal(
      await counter(run.metrics, 'controller_runtime_reconcile_total', { ...labels, result: 'success' }),
      2,
    );
    const timedOut = entries.filter(
      (e) => e.message === 'reconcile timed out: its signal is aborted; the object waits until it returns',
    );
    assert.deepEqual(
      timedOut.map((e) => [e.timeoutMs, e.name, e.controller]),
      [[300, 'stuck', 'stuck']],
    );
  });

  it("takes the Manager's reconcile timeout: a reconcile that honours its signal fails with the abort and is retried", async () => {
    const attempts: (string | undefined)[] = [];
    const run = runController(
      kc,
      {
        name: 'slow',
        for: labelledConfigMaps('timeout-honoured'),
        reconcile: async ({ signal }) => {
          attempts.push(undefined);
          if (attempts.length > 1) return;
          // A long call that takes the signal, as every client call does.
          await new Promise((_resolve, reject) => {
            signal.addEventListener(
              'abort',
              () => {
                reject(signal.reason as Error);
              },
              { once: true },
            );
          });
        },
      },
      silent,
      { reconcileTimeoutMs: 200 },
    );
    const labels = { controller: 'slow' };
    try {
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'honours-timeout', labels: { suite: 'timeout-honoured' } } },
      });
      await eventually(() => {
        assert.equal(attempts.length, 2);
      });
    } finally {
      await run.stop();
    }
    assert.equal(await counter(run.metrics, 'controller_runtime_reconcile_timeouts_total', labels), 1);
    assert.equal(await counter(run.metrics, 'controller_runtime_reconcile_errors_total', labels), 1);
    assert.equal(
      await counter(run.metrics, 'controller_runtime_reconcile_total', { ...labels, result: 'success' }),
      1,
    );
  });

  it('counts a panic as an error and a panic, logs it with its stack and retries it with backoff', async () => {
    const attempts: number[] = [];
    const { logger, entries } = capturingLogger();
    const run = runController(
      kc,
      {
        name: 'panicky',
        for: {
          group: '',
          version: 'v1',
          plural: 'configmaps',
          kind: 'ConfigMap',
          namespace: ns.name,
          labelSelector: 'suite=panic',
        },
        reconcile: ({ object }) => {
          attempts.push(Date.now());
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the panic under test
          if (attempts.length === 1) throw 'not an Error';
          // A bug on the second attempt: reading into a key the object does not have (a TypeError).
          const data = object?.data as unknown as { missing: { value: string } };
          if (attempts.length === 2 && data.missing.value === '') return Promise.resolve();
          return Promise.resolve();
        },
      },
      logger,
    );
    try {
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'panic', labels: { suite: 'panic' } }, data: { present: 'x' } },
      });
      await eventually(() => {
        assert.equal(attempts.length, 3);
      });
      const [first = 0, second = 0, third = 0] = attempts;
      assert.ok(second - first >= 5 && third - second >= 10, 'retried with backoff');
    } finally {
      await run.stop();
    }
    const labels = { controller: 'panicky' };
    assert.equal(await counter(run.metrics, 'controller_runtime_reconcile_panics_total', labels), 2);
    assert.equal(await counter(run.metrics, 'controller_runtime_reconcile_errors_total', labels), 2);
    assert.equal(
      await counter(run.metrics, 'controller_runtime_reconcile_total', { ...labels, result: 'error' }),
      2,
    );
    assert.equal(
      await counter(run.metrics, 'controller_runtime_reconcile_total', { ...labels, result: 'success' }),
      1,
    );
    assert.equal(await counter(run.metrics, 'workqueue_retries_total', { name: 'panicky' }), 2);
    const panics = entries.filter(
      (entry) => entry.message === 'observed a panic in the reconciler; retrying with backoff',
    );
    assert.equal(panics.length, 2, JSON.stringify(entries));
    assert.deepEqual(
      { panic: panics[0]?.panic, name: panics[0]?.name },
      { panic: "'not an Error'", name: 'panic' },
    );
    const typeError = panics[1]?.error as { message: string; stack: string } | undefined;
    assert.match(
      typeError?.stack ?? '',
      /^TypeError: Cannot read properties of undefined.*\n\s+at .*reconcile .*controller\.int\.test\.ts/,
    );
  });

  for (const filtered of [true, false]) {
    it(`a status-only patch ${filtered ? 'does not reconcile with' : 'reconciles without'} eventFilter: ignoreStatusOnlyUpdates`, async () => {
      const suite = filtered ? 'status-filtered' : 'status-unfiltered';
      const scope = {
        group: '',
        version: 'v1',
        plural: 'services',
        namespace: ns.name,
        labelSelector: `suite=${suite}`,
      };
      const seen: (V1Service | undefined)[] = [];
      const run = runController<V1Service>(kc, {
        name: suite,
        for: { ...scope, kind: 'Service' },
        ...(filtered ? { eventFilter: ignoreStatusOnlyUpdates } : {}),
        reconcile: ({ object }) => {
          seen.push(object);
          return Promise.resolve();
        },
      });
      const witnessed = run.witness(scope);
      const adds = () => counter(run.metrics, 'workqueue_adds_total', { name: suite });
      const ingress = (service: KubeObject | undefined) =>
        (service as V1Service | undefined)?.status?.loadBalancer?.ingress?.[0]?.ip;
      try {
        await core.createNamespacedService({
          namespace: ns.name,
          body: {
            metadata: { name: suite, labels: { suite } },
            spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
          },
        });
        await eventually(() => {
          assert.equal(seen.length, 1);
        });
        const addsBefore = await adds();
        await core.patchNamespacedServiceStatus(
          {
            name: suite,
            namespace: ns.name,
            body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } } },
          },
          mergePatch,
        );
        // The witness handler runs in the same dispatch as the controller's: once it has the update,
        // the controller's handler has judged it too.
        await eventually(() => {
          assert.ok(
            witnessed.some((event) => event.type === 'update' && ingress(event.obj) === '192.0.2.10'),
          );
        });
        if (filtered) {
          assert.equal(await adds(), addsBefore, 'the status-only update was not enqueued');
          await core.patchNamespacedService(
            { name: suite, namespace: ns.name, body: { metadata: { labels: { suite, edited: 'yes' } } } },
            mergePatch,
          );
          await eventually(() => {
            assert.equal(seen.at(-1)?.metadata?.labels?.edited, 'yes', 'a metadata change still reconciles');
          });
          assert.equal(seen.length, 2);
        } else {
          await eventually(() => {
            assert.equal(ingress(seen.at(-1)), '192.0.2.10');
          });
          assert.equal(await adds(), addsBefore + 1);
        }
      } finally {
        await run.stop();
      }
    });
  }

  it("a status write through request.status: the retry reads what was written, the write's echo enqueues nothing, someone else's change still reconciles", async () => {
    const suite = 'own-writes';
    const scope = {
      group: '',
      version: 'v1',
      plural: 'services',
      namespace: ns.name,
      labelSelector: `suite=${suite}`,
    };
    const ip = (service: V1Service | undefined) => service?.status?.loadBalancer?.ingress?.[0]?.ip;
    const seen: { ip: string | undefined; resourceVersion: string | undefined }[] = [];
    const writes: V1Service[] = [];
    const run = runController<V1Service>(kc, {
      name: suite,
      for: { ...scope, kind: 'Service' },
      // A failed reconcile is retried at once: the retry runs before the write's watch event is in.
      rateLimiter: { when: () => 0, forget: () => undefined, numRequeues: () => 0 },
      reconcile: async ({ object, status }) => {
        seen.push({ ip: ip(object), resourceVersion: object?.metadata?.resourceVersion });
        if (object === undefined || ip(object) !== undefined) return undefined;
        // Conditional on the version reconciled: a stale read would be refused with 409.
        const written = await status.patch(
          { merge: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } } },
          { resourceVersion: object.metadata?.resourceVersion ?? '' },
        );
        writes.push(written);
        throw new Error('fails after its write, to be retried at once');
      },
    });
    const witnessed = run.witness(scope);
    const adds = () => counter(run.metrics, 'workqueue_adds_total', { name: suite });
    try {
      await core.createNamespacedService({
        namespace: ns.name,
        body: {
          metadata: { name: suite, labels: { suite } },
          spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
        },
      });
      await eventually(() => {
        assert.equal(seen.length, 2);
      });
      const written = writes[0]?.metadata?.resourceVersion;
      assert.deepEqual(
        seen[1],
        { ip: '192.0.2.1', resourceVersion: written },
        'the retry read the written object',
      );
      // The witness runs in the same dispatch as the controller's handler: once it has the echo, the
      // controller has judged it.
      await eventually(() => {
        assert.ok(witnessed.some((event) => event.obj.metadata?.resourceVersion === written));
      });
      assert.equal(await adds(), 2, 'the create and the retry; not the echo of the write');
      assert.equal(seen.length, 2);

      await core.patchNamespacedServiceStatus(
        {
          name: suite,
          namespace: ns.name,
          body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.20' }] } } },
        },
        mergePatch,
      );
      await eventually(() => {
        assert.equal(seen.at(-1)?.ip, '192.0.2.20', "someone else's status change reconciles");
      });
      assert.equal(writes.length, 1);
    } finally {
      await run.stop();
    }
  });

  it("applies each watch's predicate (for, owns, watches) and the event filter on top of them", async () => {
    const primaryScope = {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespace: ns.name,
      labelSelector: 'suite=pred',
    };
    const ownedScope = {
      group: '',
      version: 'v1',
      plural: 'secrets',
      namespace: ns.name,
      labelSelector: 'suite=pred',
    };
    const watchedScope = { ...ownedScope, labelSelector: 'suite=pred-watched' };
    const createsOnly: Predicate = { update: () => false };
    const reconciled: string[] = [];
    const run = runController(kc, {
      name: 'predicates',
      for: { ...primaryScope, kind: 'ConfigMap', predicate: labelsChanged },
      owns: [{ ...ownedScope, predicate: annotationsChanged }],
      watches: [
        {
          resource: watchedScope,
          map: (secret) => [`${ns.name}/${secret.metadata?.annotations?.target ?? ''}`],
          predicate: createsOnly,
        },
      ],
      eventFilter: { delete: () => false },
      reconcile: ({ key }) => {
        reconciled.push(key);
        return Promise.resolve();
      },
    });
    const primaryEvents = run.witness(primaryScope);
    const ownedEvents = run.witness(ownedScope);
    const watchedEvents = run.witness(watchedScope);
    const adds = () => counter(run.metrics, 'workqueue_adds_total', { name: 'predicates' });
    const key = `${ns.name}/pred`;
    /** Runs `change`, waits until the witness has its event, then checks it added nothing to the queue. */
    const dropped = async (
      change: () => Promise<unknown>,
      events: { type: string; obj: KubeObject }[],
      type: string,
      check: (obj: KubeObject) => boolean,
    ) => {
      const before = await adds();
      await change();
      await eventually(() => {
        assert.ok(events.some((event) => event.type === type && check(event.obj)));
      });
      assert.equal(await adds(), before, `the ${type} was not enqueued`);
    };
    const reconciledTimes = async (n: number) => {
      await eventually(() => {
        assert.deepEqual(
          reconciled,
          Array.from({ length: n }, () => key),
        );
      });
    };
    try {
      const primary = await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'pred', labels: { suite: 'pred' } }, data: { v: '1' } },
      });
      await reconciledTimes(1);

      // for: labelsChanged drops a data change and passes a label change.
      const patchPrimary = (body: object) =>
        core.patchNamespacedConfigMap({ name: 'pred', namespace: ns.name, body }, mergePatch);
      await dropped(
        () => patchPrimary({ data: { v: '2' } }),
        primaryEvents,
        'update',
        (obj) => (obj as V1ConfigMap).data?.v === '2',
      );
      await patchPrimary({ metadata: { labels: { suite: 'pred', tier: 'a' } } });
      await reconciledTimes(2);

      // owns: annotationsChanged passes the create, drops a data change, passes an annotation change.
      const ownerReferences = [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'pred',
          uid: primary.metadata?.uid ?? '',
          controller: true,
        },
      ];
      await core.createNamespacedSecret({
        namespace: ns.name,
        body: {
          metadata: { name: 'pred-owned', labels: { suite: 'pred' }, ownerReferences },
          stringData: { v: '1' },
        },
      });
      await reconciledTimes(3);
      const patchSecret = (name: string, body: object) =>
        core.patchNamespacedSecret({ name, namespace: ns.name, body }, mergePatch);
      await dropped(
        () => patchSecret('pred-owned', { stringData: { v: '2' } }),
        ownedEvents,
        'update',
        (obj) => (obj as V1Secret).data?.v === btoa('2'),
      );
      await patchSecret('pred-owned', { metadata: { annotations: { note: 'n' } } });
      await reconciledTimes(4);

      // watches: a custom predicate that passes creates and drops updates.
      await core.createNamespacedSecret({
        namespace: ns.name,
        body: {
          metadata: {
            name: 'pred-watched',
            labels: { suite: 'pred-watched' },
            annotations: { target: 'pred' },
          },
          stringData: { v: '1' },
        },
      });
      await reconciledTimes(5);
      await dropped(
        () => patchSecret('pred-watched', { metadata: { annotations: { target: 'pred', note: 'n' } } }),
        watchedEvents,
        'update',
        (obj) => obj.metadata?.annotations?.note === 'n',
      );

      // eventFilter: deletes of every watch are dropped, whatever the watch's own predicate says.
      const deleted = () => true;
      await dropped(
        () => core.deleteNamespacedSecret({ name: 'pred-watched', namespace: ns.name }),
        watchedEvents,
        'delete',
        deleted,
      );
      await dropped(
        () => core.deleteNamespacedSecret({ name: 'pred-owned', namespace: ns.name }),
        ownedEvents,
        'delete',
        deleted,
      );
      await dropped(
        () => core.deleteNamespacedConfigMap({ name: 'pred', namespace: ns.name }),
        primaryEvents,
        'delete',
        deleted,
      );
      assert.equal(reconciled.length, 5);
    } finally {
      await run.stop();
    }
  });
});
