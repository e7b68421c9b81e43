/**
 * Heap per cached pod: at-scheduler's pod cache (`keepPodFieldsRead` after the Manager's
 * `stripManagedFields`, on pods read as protobuf), the same on pods read as JSON, and the Manager's
 * transform alone (JSON), on pods the API server served.
 *
 *   node --conditions=development bench/pod-cache.bench.ts      # part of `pnpm bench`, about a minute
 *   POD_CACHE_BENCH_PODS=5000, POD_CACHE_BENCH_RUNS=3           # the defaults
 *
 * One control plane with one At and that many pods of `buildPod()` owned by it. Each measurement is a
 * process of its own (this file with `probe`), so that nothing one cache left behind is counted against
 * the next: heapUsed after two full GCs, before and after an informer of the controller's pod scope
 * synced, per pod. The variants take turns, runs times.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createSilentLogger, Manager } from '@loopwright/runtime';
import { podCacheScope } from '../src/controller.ts';
import { buildPod } from '../src/pod.ts';
import { POD_RESOURCE, type Pod } from '../src/resource.ts';
import { benchNamespace, createAts, forEachConcurrently } from './ats.ts';
import { withFreshPlane } from './plane.ts';
import { formatSpread, spread } from './stats.ts';

const VARIANTS = {
  /** The Manager's default transform alone, as every controller's cache without a transform of its own. */
  stripManagedFields: { transform: false, protobuf: false },
  /** The pod scope's transform, on pods read as JSON. */
  'stripManagedFields, then keepPodFieldsRead': { transform: true, protobuf: false },
  /** at-scheduler's pod cache: the same, on pods read as protobuf (`decodePodFieldsRead`). */
  'the same, read as protobuf': { transform: true, protobuf: true },
} as const;
type Variant = keyof typeof VARIANTS;

if (process.argv[2] === 'probe') await probe();
else await bench();

async function bench(): Promise<void> {
  const count = Number(process.env['POD_CACHE_BENCH_PODS'] ?? 5000);
  const runs = Number(process.env['POD_CACHE_BENCH_RUNS'] ?? 3);
  console.log(
    `pod cache bench: heap per cached pod, ${count} pods of buildPod(), ${runs} run(s) per variant`,
  );
  await withFreshPlane(async ({ admin, kc, kubeconfigPath }) => {
    const namespace = await benchNamespace(kc, 'bench-pod-cache');
    const [at] = await createAts(admin, namespace, [Date.now() + 3_600_000]);
    if (at === undefined) throw new Error('the At was not created');
    const pods = admin.resource<Pod>(POD_RESOURCE);
    await forEachConcurrently(count, async (i) => {
      const pod = buildPod(at, `${at.metadata.name}-pod-${i}`, { defaultImage: 'busybox:1.37.0' });
      await pods.create(pod, { answer: 'none' });
    });
    const bytes = new Map<Variant, number[]>();
    for (let run = 0; run < runs; run++)
      for (const variant of Object.keys(VARIANTS) as Variant[]) {
        const perPod = await measureInChild(kubeconfigPath, namespace, variant, count);
        bytes.set(variant, [...(bytes.get(variant) ?? []), perPod]);
      }
    const plain = bytes.get('stripManagedFields') ?? [];
    for (const [variant, values] of bytes) {
      const { min, median, max } = spread(values);
      const ratios = formatSpread(
        values.map((value, run) => value / (plain[run] ?? Number.NaN)),
        2,
        'x',
      );
      console.log(
        `  ${variant}: ${min} / ${median} / ${max} B per pod (min/median/max)` +
          (values === plain ? '' : `; run by run against stripManagedFields alone ${ratios}`),
      );
    }
  });
}

async function measureInChild(
  kubeconfigPath: string,
  namespace: string,
  variant: Variant,
  pods: number,
): Promise<number> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--conditions=development', import.meta.filename, 'probe'],
    {
      env: {
        ...process.env,
        PROBE_KUBECONFIG: kubeconfigPath,
        PROBE_NAMESPACE: namespace,
        PROBE_VARIANT: variant,
      },
    },
  );
  const { cached, bytesPerPod } = JSON.parse(stdout) as { cached: number; bytesPerPod: number };
  if (cached !== pods) throw new Error(`the ${variant} cache holds ${cached} pods, not ${pods}`);
  return bytesPerPod;
}

/** In the child: sync one pod informer as the controller's Manager builds it, and report its heap. */
async function probe(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the probe needs --expose-gc');
  const kc = new KubeConfig();
  kc.loadFromFile(process.env['PROBE_KUBECONFIG'] ?? '');
  const variant = process.env['PROBE_VARIANT'] as Variant;
  const manager = new Manager({ kubeConfig: kc, logger: createSilentLogger(), health: false });
  const heapUsed = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const scope = podCacheScope(process.env['PROBE_NAMESPACE']);
  if (!VARIANTS[variant].transform) delete scope.transform;
  if (!VARIANTS[variant].protobuf) delete scope.protobuf;
  const before = heapUsed();
  const informer = manager.factory.forResource(scope);
  manager.factory.start();
  await manager.factory.waitForCacheSync();
  const after = heapUsed();
  const cached = informer.lister.list().length;
  manager.factory.stop();
  console.log(JSON.stringify({ cached, bytesPerPod: Math.round((after - before) / cached) }));
  process.exit(0);
}
