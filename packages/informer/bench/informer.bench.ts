/**
 * Initial sync of 10k ConfigMaps: @loopwright/informer vs @kubernetes/client-node `makeInformer`,
 * against the same real API server in the same run. Reports time to synced and retained heap per
 * cached object, each informer's heap as a ratio of client-node's, min/median/max over the runs.
 *
 * Each implementation is measured in its own child process (fresh heap), once per run: after a
 * warm-up sync of a small namespace (loads modules, JIT, TLS), heapUsed after a full GC is the
 * baseline; then the big sync runs, and heapUsed after a full GC with the cache still referenced,
 * minus the baseline, divided by the number of cached objects, is the heap per object. A ratio is
 * taken within one run (against that run's client-node figure).
 *
 *   pnpm run bench                 (OBJECTS=2000 pnpm run bench for a quicker run; RUNS=5 for more runs)
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/client';
import { startControlPlane } from '@loopwright/envtest';
import { Informer, stripManagedFields, type KubeObject } from '../src/index.ts';
import { minMedianMax } from './stats.ts';

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const NAMESPACE = 'informer-bench';
const WARMUP_NAMESPACE = 'informer-bench-warmup';
const LABEL_SELECTOR = 'bench=informer';
const RUNS = Number(process.env.RUNS ?? 3);
const CREATE_CONCURRENCY = 32;
/** The baseline first: the other rows are ratios of its figure in the same run. */
const IMPLEMENTATIONS = {
  'client-node': '@kubernetes/client-node makeInformer',
  // What every controller's informers do: the runtime's Manager sets this transform by default.
  loopwright: '@loopwright/informer, as controllers get it (stripManagedFields)',
  'loopwright-untransformed': '@loopwright/informer, no transform (managedFields kept)',
} as const;
type Implementation = keyof typeof IMPLEMENTATIONS;

interface Measurement {
  syncMs: number;
  cached: number;
  heapPerObject: number;
}

/** Syncs `namespace` with one implementation; returns the object count and something that retains the cache. */
async function sync(
  implementation: Implementation,
  kc: KubeConfig,
  namespace: string,
): Promise<{ cached: number; cache: unknown }> {
  if (implementation === 'client-node') {
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ConfigMap>(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace, labelSelector: LABEL_SELECTOR }),
      LABEL_SELECTOR,
    );
    informer.on('error', () => undefined);
    await informer.start(); // resolves once the list is cached
    const cached = informer.list(namespace).length;
    await informer.stop();
    return { cached, cache: informer };
  }
  const informer = new Informer<KubeObject>({
    // client-node's informer has no client-side rate limit either.
    client: new KubeClient(kc, { rateLimit: false }),
    group: '',
    version: 'v1',
    plural: 'configmaps',
    namespace,
    labelSelector: LABEL_SELECTOR,
    logger: { debug: () => undefined, warn: () => undefined, error: () => undefined },
    ...(implementation === 'loopwright' ? { transform: stripManagedFields } : {}),
  });
  informer.start();
  await informer.waitForSync();
  const cached = informer.lister.list().length;
  informer.stop();
  return { cached, cache: informer };
}

async function measureInThisProcess(implementation: Implementation): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc (pnpm run bench does)');
  const heapUsed = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const kc = new KubeConfig();
  kc.loadFromDefault();
  await sync(implementation, kc, WARMUP_NAMESPACE);
  const before = heapUsed();
  const started = performance.now();
  const { cached, cache } = await sync(implementation, kc, NAMESPACE);
  const syncMs = performance.now() - started;
  const after = heapUsed();
  const measurement: Measurement = { syncMs, cached, heapPerObject: (after - before) / cached };
  process.stdout.write(JSON.stringify(measurement));
  // `cache` is used after the last GC so that it is certainly retained during the measurement.
  if (cache === undefined) throw new Error('unreachable');
}

async function createConfigMaps(core: CoreV1Api, namespace: string, count: number): Promise<void> {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        await core.createNamespacedConfigMap({
          namespace,
          body: {
            metadata: { name: `cm-${i}`, labels: { app: `app-${i % 10}`, bench: 'informer' } },
            data: { index: String(i), payload: 'x'.repeat(64) },
          },
        });
      }
    }),
  );
}

function measureInChildProcess(implementation: Implementation, kubeconfigPath: string): Measurement {
  const output = execFileSync(
    process.execPath,
    ['--expose-gc', '--conditions=development', fileURLToPath(import.meta.url), 'measure', implementation],
    { env: { ...process.env, KUBECONFIG: kubeconfigPath }, encoding: 'utf8' },
  );
  const result = JSON.parse(output) as Measurement;
  if (result.cached !== OBJECTS) {
    throw new Error(`${IMPLEMENTATIONS[implementation]} cached ${result.cached}, expected ${OBJECTS}`);
  }
  return result;
}

function report(runs: readonly Record<Implementation, Measurement>[]): void {
  const spread = (values: readonly number[], format: (value: number) => string): string =>
    minMedianMax(values).map(format).join(' / ');
  console.log(
    `\ninitial sync of ${OBJECTS} ConfigMaps, ${runs.length} runs (node ${process.version}, a child process per informer and run)`,
  );
  console.log(
    'informer'.padEnd(66) +
      'synced in (median)'.padStart(19) +
      'heap/object min / median / max'.padStart(34) +
      'vs client-node min / median / max'.padStart(36),
  );
  for (const [implementation, name] of Object.entries(IMPLEMENTATIONS) as [Implementation, string][]) {
    const own = runs.map((run) => run[implementation]);
    const ratios = runs.map((run) => run[implementation].heapPerObject / run['client-node'].heapPerObject);
    const [, syncMs] = minMedianMax(own.map((m) => m.syncMs));
    console.log(
      name.padEnd(66) +
        `${(syncMs / 1000).toFixed(2)} s`.padStart(19) +
        spread(
          own.map((m) => m.heapPerObject),
          (bytes) => `${Math.round(bytes)} B`,
        ).padStart(34) +
        (implementation === 'client-node' ? 'baseline' : spread(ratios, (r) => `${r.toFixed(2)}x`)).padStart(
          36,
        ),
    );
  }
}

async function main(): Promise<void> {
  const controlPlane = await startControlPlane({ log: () => undefined });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const createStarted = performance.now();
    await createConfigMaps(core, NAMESPACE, OBJECTS);
    await createConfigMaps(core, WARMUP_NAMESPACE, 50);
    console.log(
      `created ${OBJECTS} ConfigMaps in ${((performance.now() - createStarted) / 1000).toFixed(1)} s`,
    );

    const runs: Record<Implementation, Measurement>[] = [];
    for (let run = 0; run < RUNS; run++) {
      runs.push(
        Object.fromEntries(
          Object.keys(IMPLEMENTATIONS).map((implementation) => [
            implementation,
            measureInChildProcess(implementation as Implementation, controlPlane.kubeconfigPath),
          ]),
        ) as Record<Implementation, Measurement>,
      );
    }
    report(runs);
  } finally {
    await controlPlane.stop();
  }
}

if (process.argv[2] === 'measure') await measureInThisProcess(process.argv[3] as Implementation);
else await main();
