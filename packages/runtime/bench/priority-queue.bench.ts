/**
 * A new object's wait behind a restart's backlog: the priority queue against plain FIFO, in the same
 * run, on one real API server.
 *
 * OBJECTS ConfigMaps exist. Each try starts a Manager with one controller over them (a restart: the
 * informer's initial list enqueues every object), whose reconcile reads its object from the API server
 * (one real GET, the least a reconcile does). Once the backlog is draining, the try creates one new
 * ConfigMap and measures from just before the create to the start of its reconcile; then it stops the
 * Manager and deletes the ConfigMap. Tries alternate the two queues (which one goes first alternates
 * too), so drift on the machine hits both alike.
 *
 *   pnpm run bench                           (in packages/runtime)
 *   OBJECTS=2000 TRIES=5 pnpm run bench      (a quicker run)
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '@loopwright/envtest';
import { createMetrics } from '@loopwright/metrics';
import winston from 'winston';
import { Controller, Manager, type KubeObject } from '../src/index.ts';

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const TRIES = Number(process.env.TRIES ?? 20);
const WORKERS = Number(process.env.WORKERS ?? 4);
/** The backlog is draining once this many of its reconciles have started. */
const BACKLOG_STARTED = 100;
const NAMESPACE = 'priority-bench';
const CREATE_CONCURRENCY = 32;
const ORDERINGS = ['priority', 'fifo'] as const;
type Ordering = (typeof ORDERINGS)[number];

interface Sample {
  /** From just before the create to the start of the new object's reconcile. */
  waitMs: number;
  /** Backlog reconciles started before it. */
  backlogBefore: number;
}

const silent = winston.createLogger({ silent: true });

async function createConfigMaps(core: CoreV1Api, count: number): Promise<void> {
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        await core.createNamespacedConfigMap({
          namespace: NAMESPACE,
          body: { metadata: { name: `cm-${i}` }, data: { index: String(i), payload: 'x'.repeat(256) } },
        });
      }
    }),
  );
}

/** One restart with `ordering`: the new object's wait, measured while the backlog drains. */
async function tryOnce(kc: KubeConfig, core: CoreV1Api, ordering: Ordering, name: string): Promise<Sample> {
  const probeKey = `${NAMESPACE}/${name}`;
  let backlogStarted = 0;
  let draining: () => void = () => undefined;
  const backlogDraining = new Promise<void>((resolve) => (draining = resolve));
  let probed: (sample: number) => void = () => undefined;
  const probeReconciled = new Promise<number>((resolve) => (probed = resolve));
  const manager = new Manager({ kubeConfig: kc, logger: silent, metrics: createMetrics(), health: false });
  const resource = manager.client.resource<KubeObject>({
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
  });
  manager.add(
    new Controller<KubeObject>({
      name: 'bench',
      for: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespace: NAMESPACE },
      maxConcurrentReconciles: WORKERS,
      usePriorityQueue: ordering === 'priority',
      reconcile: async ({ key, namespace = '', name: objectName, signal }) => {
        if (key === probeKey) {
          probed(performance.now());
          return;
        }
        if (++backlogStarted === BACKLOG_STARTED) draining();
        await resource.getOptional({ namespace, name: objectName }, { signal });
      },
    }),
  );
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await backlogDraining;
    const before = backlogStarted;
    const createdAt = performance.now();
    await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name } } });
    const reconciledAt = await probeReconciled;
    return { waitMs: reconciledAt - createdAt, backlogBefore: backlogStarted - before };
  } finally {
    stop.abort();
    await running;
    await core.deleteNamespacedConfigMap({ namespace: NAMESPACE, name });
  }
}

/** The value at quantile `q` (nearest rank) of `values`. */
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

function report(samples: Record<Ordering, Sample[]>): void {
  console.log(
    `\na new object's time to reconcile after a restart over ${OBJECTS} objects, ${TRIES} tries each ` +
      `(${WORKERS} workers, each backlog reconcile one GET; node ${process.version})`,
  );
  console.log(
    'queue'.padEnd(10) +
      'min'.padStart(10) +
      'p50'.padStart(10) +
      'p99'.padStart(10) +
      'max'.padStart(10) +
      'backlog reconciles before it (p50)'.padStart(38),
  );
  for (const ordering of ORDERINGS) {
    const waits = samples[ordering].map((s) => s.waitMs);
    const cell = (ms: number): string => (ms < 1000 ? ms.toFixed(0) + ' ms' : (ms / 1000).toFixed(2) + ' s');
    console.log(
      ordering.padEnd(10) +
        cell(Math.min(...waits)).padStart(10) +
        cell(quantile(waits, 0.5)).padStart(10) +
        cell(quantile(waits, 0.99)).padStart(10) +
        cell(Math.max(...waits)).padStart(10) +
        String(
          quantile(
            samples[ordering].map((s) => s.backlogBefore),
            0.5,
          ),
        ).padStart(38),
    );
  }
  const p99 = quantile(
    samples.priority.map((s) => s.waitMs),
    0.99,
  );
  console.log(`target: priority p99 under 1 s while the backlog drains: ${p99 < 1000 ? 'met' : 'MISSED'}`);
}

async function main(): Promise<void> {
  const controlPlane = await startControlPlane({ log: () => undefined });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const createStarted = performance.now();
    await createConfigMaps(core, OBJECTS);
    console.log(
      `created ${OBJECTS} ConfigMaps in ${((performance.now() - createStarted) / 1000).toFixed(1)} s`,
    );
    const samples: Record<Ordering, Sample[]> = { priority: [], fifo: [] };
    for (let i = 0; i < TRIES; i++) {
      const order = i % 2 === 0 ? ORDERINGS : [...ORDERINGS].reverse();
      for (const ordering of order) {
        const sample = await tryOnce(kc, core, ordering, `new-${ordering}-${i}`);
        samples[ordering].push(sample);
        process.stdout.write(`try ${i + 1}/${TRIES} ${ordering}: ${sample.waitMs.toFixed(0)} ms\n`);
      }
    }
    report(samples);
  } finally {
    await controlPlane.stop();
  }
}

await main();
