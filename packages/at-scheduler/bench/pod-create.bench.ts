/**
 * kube-apiserver's CPU per pod create: the controller's (`kubeAtApi`'s createPod, a protobuf body) against
 * the same pod of `buildPod()` sent as JSON (as the controller did before, answered with its metadata).
 *
 *   node --conditions=development bench/pod-create.bench.ts      # part of `pnpm bench`, about 2 minutes
 *   POD_CREATE_BENCH_PODS=3000, POD_CREATE_BENCH_RUNS=4         # the defaults
 *
 * One control plane placed as in the at-scheduler bench (`AT_BENCH_CPUS`), one At owning every pod,
 * no watcher. Each run creates that many pods per variant, 32 at a time, the variants taking turns (who
 * goes first rotates), and reads kube-apiserver's CPU from /proc between the first create sent and the
 * last answered. What a create costs the server is what sets the starts/s of a controller at its limit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '@loopwright/runtime';
import { FIELD_MANAGER, kubeAtApi } from '../src/api.ts';
import { buildPod } from '../src/pod.ts';
import { POD_RESOURCE, type Pod } from '../src/resource.ts';
import { benchNamespace, createAts, forEachConcurrently, type StoredAt } from './ats.ts';
import { CpuSampler } from './cpu-sampler.ts';
import { cpuPlacement } from './cpus.ts';
import { withFreshPlane } from './plane.ts';
import { formatSpread } from './stats.ts';

const PODS = Number(process.env['POD_CREATE_BENCH_PODS'] ?? 3000);
const RUNS = Number(process.env['POD_CREATE_BENCH_RUNS'] ?? 4);
const CONCURRENCY = 32;
/** Created before the first run, so that no variant pays for the server's first requests of a kind. */
const WARM_UP_PODS = 300;
/** Lets the server finish the last run's work (its watch cache, its GC) before the next one. */
const SETTLE_MS = 1500;

type Create = (client: KubeClient, pod: Pod) => Promise<void>;

const VARIANTS: Record<string, Create> = {
  JSON: (client, pod) =>
    client.resource<Pod>(POD_RESOURCE).create(pod, { answer: 'none', fieldManager: FIELD_MANAGER }),
  'protobuf (the controller)': (client, pod) => kubeAtApi(client).createPod(pod),
};

const placement = cpuPlacement();
const cpu = new CpuSampler();
console.log(
  `pod create bench: kube-apiserver CPU per create, ${PODS} pods of buildPod() per variant and run, ` +
    `${RUNS} runs, ${CONCURRENCY} at a time`,
);
console.log(placement.describe());
const perCreate = new Map<string, number[]>(Object.keys(VARIANTS).map((name) => [name, []]));
const ratios: number[] = [];
try {
  await withFreshPlane(async ({ kc, admin }) => {
    const namespace = await benchNamespace(kc, 'bench-pod-create');
    const [owner] = await createAts(admin, namespace, [Date.parse('2099-01-01T00:00:00Z')]);
    let batch = 0;
    const createAll = async (create: Create, count: number): Promise<void> => {
      batch += 1;
      await forEachConcurrently(count, (i) =>
        create(admin, buildPod(owner as StoredAt, `b${batch}-${i}`, { defaultImage: 'busybox:1.37.0' })),
      );
    };
    for (const create of Object.values(VARIANTS)) await createAll(create, WARM_UP_PODS);
    const names = Object.keys(VARIANTS);
    for (let run = 0; run < RUNS; run++) {
      const order = [...names.slice(run % names.length), ...names.slice(0, run % names.length)];
      const cost = new Map<string, number>();
      for (const name of order) {
        await sleep(SETTLE_MS);
        const fromMs = Date.now();
        await createAll(VARIANTS[name] as Create, PODS);
        const toMs = Date.now();
        const ms = ((cpu.between(fromMs, toMs).get('kube-apiserver') ?? 0) * 1000) / PODS;
        cost.set(name, ms);
        perCreate.get(name)?.push(ms);
        console.log(
          `  run ${run + 1}/${RUNS} ${name}: ${((PODS * 1000) / (toMs - fromMs)).toFixed(0)} creates/s, ` +
            `kube-apiserver ${ms.toFixed(3)} ms a create`,
        );
      }
      ratios.push((cost.get(names[1] ?? '') ?? Number.NaN) / (cost.get(names[0] ?? '') ?? Number.NaN));
    }
  }, placement);
} finally {
  cpu.stop();
}
console.log('kube-apiserver CPU per create (min / median / max over the runs):');
for (const [name, values] of perCreate) console.log(`  ${name}: ${formatSpread(values, 3)} ms`);
console.log(`  protobuf / JSON, run by run: ${formatSpread(ratios, 2)}`);
