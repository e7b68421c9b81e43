/**
 * Memory per replica with server-side sharding (issue 39, "Done when" 3): each of 3 sharded replicas
 * should cache about a third of N Ats, and its heap should shrink with it, against one unsharded replica,
 * in the same run and over the same objects.
 *
 *   pnpm exec node --conditions=development bench/sharded-memory.bench.ts
 *   AT_MEMORY_COUNT=30000              # N, the Ats (this default)
 *   AT_MEMORY_LOG_DIR=<dir>            # where the replicas' logs stay (a temp dir)
 *
 * One control plane with kube-apiserver's ShardedListAndWatch gate on (bench/plane.ts). N Ats in one
 * namespace, all due a year from now: nothing starts and there are no pods, so the bench measures what
 * caching the Ats costs, not work. Then, one after the other against those Ats, the released program
 * (bench/sharded-replica.ts: the image's bundle, configured by its environment, logs at info):
 * 1. one unsharded replica, the program's plain mode (SHARDING=false, LEADER_ELECT=false);
 * 2. three sharded replicas of one ring (SHARDING=true, the program's member Lease defaults), started
 *    together. The ring has settled when their member Leases hold all 256 buckets, none twice, and no
 *    replica logged a hand-off for 3 s; each must have logged that it runs with server-side shard
 *    selectors (the bench fails otherwise: in-replica filtering caches everything by design).
 * A replica is measured once its informers have synced, the sharded ones' Ats together are N, and it is
 * idle (every cached At reconciled at least once, its workqueues empty), so the first reconciles' garbage
 * and the workqueue's start-up state do not count; the delayed keys (one per At, due in a year) do: they
 * are part of what an At costs.
 *
 * Per replica (bench/replica-memory.ts): the Ats its informer holds, counted in `GET /cache` (the
 * runtime's `--cache-dump-bind-address`), not estimated; heap = V8's used heap right after a full GC
 * forced through the inspector (the child runs with `NODE_OPTIONS=--inspect=127.0.0.1:0`: the program
 * never calls gc(), so --expose-gc would do nothing), with the program's own `nodejs_heap_used_after_gc_bytes`
 * read just after for comparison; RSS from /proc. Sharded / unsharded is the ratio of the forced-GC
 * heaps. A heap holds more than the cache (the bundle's code, the client, metrics), so a third of the
 * Ats does not make a third of the heap: a line through the two phases' figures gives the cost of one
 * cached At and the part that does not scale with N.
 *
 * Exits 1 when a sharded replica caches more than half of N, or one did not run with server-side
 * shard selectors.
 *
 * Two runs on 2026-11-29 (N = 30,000, the loaded 2-core machine; the table is in the README's
 * Benchmark): each sharded replica cached 9,918 to 10,070 Ats; unsharded heap 29.9 and 29.6 MiB, the
 * sharded ones 0.63-0.64 of it, except the one that started first, 0.79-0.80: it held every bucket for
 * a few seconds and keeps the workqueue keys of the Ats it handed off (README).
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchNamespace, createAts } from './ats.ts';
import { HANDOFF_MESSAGES, parseLog } from './churn-log.ts';
import { bundleReleasedProgram, type ControllerBundle } from './controller-bundle.ts';
import { memberBuckets, settledRing } from './member-buckets.ts';
import { withFreshPlane, type BenchPlane } from './plane.ts';
import {
  cacheCounts,
  metricSums,
  MEMORY_PROBE_ENV,
  probeAddresses,
  rssBytes,
  usedHeapAfterForcedGc,
  type ProbeAddresses,
} from './replica-memory.ts';
import { ShardedReplica } from './sharded-replica.ts';

const N = Number(process.env.AT_MEMORY_COUNT ?? 30_000);
const RING = 'memory';
const SHARDED = 3;
const YEAR_MS = 365 * 24 * 3600 * 1000;
const SERVER_SIDE = 'running sharded: server-side shard selectors: each replica caches only its share';
const IN_REPLICA =
  'running sharded: in-replica filtering: every replica caches everything, reconciles only its share';
const SETTLED_MS = 3000;
/** Start-up, the list of N Ats and a reconcile of each, on a loaded 2-core machine. */
const WAIT_MS = 600_000;
const POLL_MS = 1000;

const out = (line: string): boolean => process.stdout.write(`${line}\n`);
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

interface Measure {
  replica: string;
  ats: number;
  pods: number;
  heapBytes: number;
  heapAfterGcMetricBytes: number;
  rssBytes: number;
}

async function addressesOf(replica: ShardedReplica): Promise<ProbeAddresses> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const addresses = await probeAddresses(replica.logPath);
    if (addresses) return addresses;
    if (!replica.running) throw new Error(`${replica.identity} exited (${replica.exit}) before serving`);
    if (Date.now() > deadline) throw new Error(`${replica.identity} served nothing in ${WAIT_MS} ms`);
    await sleep(POLL_MS);
  }
}

/**
 * Until every replica's informers have synced, their Ats sum to N, and each is idle: at least as many
 * reconciles as cached Ats and empty workqueues, twice in a row.
 */
async function untilIdle(replicas: readonly { replica: ShardedReplica; addresses: ProbeAddresses }[]) {
  const deadline = Date.now() + WAIT_MS;
  let quietPolls = 0;
  for (;;) {
    const states = await Promise.all(
      replicas.map(async ({ replica, addresses }) => {
        if (!replica.running) throw new Error(`${replica.identity} exited (${replica.exit})`);
        const counts = await cacheCounts(addresses.cachePort);
        const metrics = await metricSums(addresses.metricsPort);
        const reconciles = metrics.get('controller_runtime_reconcile_total') ?? 0;
        const depth = metrics.get('workqueue_depth') ?? 0;
        return counts.synced && reconciles >= counts.ats && depth === 0 ? counts.ats : undefined;
      }),
    );
    const total = states.reduce<number>((sum, ats) => sum + (ats ?? Number.NaN), 0);
    quietPolls = total === N ? quietPolls + 1 : 0;
    if (quietPolls >= 2) return;
    if (Date.now() > deadline)
      throw new Error(`not idle with all ${N} Ats cached in ${WAIT_MS} ms (cached: ${states.join(', ')})`);
    await sleep(POLL_MS);
  }
}

async function measure(replica: ShardedReplica, addresses: ProbeAddresses): Promise<Measure> {
  // The heap first: the cache dump's JSON is garbage the GC would otherwise have to find.
  const heapBytes = await usedHeapAfterForcedGc(addresses.inspectorUrl);
  const metrics = await metricSums(addresses.metricsPort);
  const rss = await rssBytes(replica.pid);
  const counts = await cacheCounts(addresses.cachePort);
  return {
    replica: replica.identity,
    ats: counts.ats,
    pods: counts.pods,
    heapBytes,
    heapAfterGcMetricBytes: metrics.get('nodejs_heap_used_after_gc_bytes') ?? Number.NaN,
    rssBytes: rss,
  };
}

function start(
  plane: BenchPlane,
  bundle: ControllerBundle,
  namespace: string,
  logDir: string,
  identity: string,
  sharded: boolean,
): Promise<ShardedReplica> {
  return ShardedReplica.start({
    main: bundle.main,
    kubeconfigPath: plane.kubeconfigPath,
    namespace,
    ring: RING,
    identity,
    logPath: join(logDir, `${identity}.log`),
    logLevel: 'info',
    // The plain mode: one replica, no election (the variables after SHARDING=true win).
    extraEnv: { ...MEMORY_PROBE_ENV, ...(sharded ? {} : { SHARDING: 'false', LEADER_ELECT: 'false' }) },
  });
}

async function unshardedPhase(
  plane: BenchPlane,
  bundle: ControllerBundle,
  namespace: string,
  logDir: string,
): Promise<Measure> {
  const replica = await start(plane, bundle, namespace, logDir, 'unsharded', false);
  try {
    const addresses = await addressesOf(replica);
    await untilIdle([{ replica, addresses }]);
    return await measure(replica, addresses);
  } finally {
    await replica.stop(60_000);
  }
}

/** The sharded replicas' figures, and the buckets each held (by identity). */
async function shardedPhase(
  plane: BenchPlane,
  bundle: ControllerBundle,
  namespace: string,
  logDir: string,
): Promise<{ measures: Measure[]; buckets: Map<string, number[]>; modes: Map<string, string> }> {
  const replicas = await Promise.all(
    Array.from({ length: SHARDED }, (_, i) => start(plane, bundle, namespace, logDir, `sharded-${i}`, true)),
  );
  try {
    await Promise.all(replicas.map((replica) => replica.logged('took buckets', WAIT_MS)));
    const buckets = await settled(plane, namespace, replicas);
    const modes = new Map<string, string>();
    for (const replica of replicas) {
      const log = await replica.log();
      const said = (message: string): boolean => log.includes(`"message":${JSON.stringify(message)}`);
      modes.set(
        replica.identity,
        said(SERVER_SIDE) ? 'server-side' : said(IN_REPLICA) ? 'IN-REPLICA' : 'NONE LOGGED',
      );
    }
    if ([...modes.values()].some((mode) => mode !== 'server-side')) return { measures: [], buckets, modes };
    const withAddresses = await Promise.all(
      replicas.map(async (replica) => ({ replica, addresses: await addressesOf(replica) })),
    );
    await untilIdle(withAddresses);
    const measures: Measure[] = [];
    // One at a time: a forced GC takes a core, and the measures should not contend with each other.
    for (const { replica, addresses } of withAddresses) measures.push(await measure(replica, addresses));
    return { measures, buckets, modes };
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop(60_000)));
  }
}

/** Until the member Leases hold every bucket once and no replica logged a hand-off for SETTLED_MS. */
async function settled(
  plane: BenchPlane,
  namespace: string,
  replicas: readonly ShardedReplica[],
): Promise<Map<string, number[]>> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const held = await memberBuckets(plane.admin, namespace, RING);
    const logs = await Promise.all(replicas.map(async (replica) => parseLog(await replica.log())));
    const lastHandoff = Math.max(
      ...logs.flat().flatMap((line) => (HANDOFF_MESSAGES.has(line.message) ? [line.ms] : [])),
    );
    if (settledRing(held, replicas.length) && Date.now() - lastHandoff >= SETTLED_MS) return held;
    if (Date.now() > deadline) throw new Error('the ring did not settle');
    await sleep(500);
  }
}

function table(unsharded: Measure, sharded: readonly Measure[], buckets: ReadonlyMap<string, number[]>) {
  out(
    'replica      buckets  Ats cached  pods  heap (forced GC)  heap_used_after_gc  RSS        heap / unsharded',
  );
  const row = (m: Measure, held: string, ratio: string): void => {
    out(
      `${m.replica.padEnd(12)} ${held.padStart(7)}  ${String(m.ats).padStart(10)}  ${String(m.pods).padStart(4)}  ` +
        `${mib(m.heapBytes).padStart(16)}  ${mib(m.heapAfterGcMetricBytes).padStart(18)}  ` +
        `${mib(m.rssBytes).padStart(9)}  ${ratio}`,
    );
  };
  row(unsharded, 'all', '1.00');
  for (const m of sharded) {
    const held = buckets.get(m.replica)?.length ?? 0;
    row(m, String(held), (m.heapBytes / unsharded.heapBytes).toFixed(2));
  }
}

out(
  `sharded memory bench: N = ${N} Ats due in a year, 1 unsharded then ${SHARDED} sharded replicas over the ` +
    'same Ats; ShardedListAndWatch on. Indicative: one run on a loaded 2-core machine.',
);
const bundle = await bundleReleasedProgram();
const logDir = process.env.AT_MEMORY_LOG_DIR ?? (await mkdtemp(join(tmpdir(), 'at-memory-')));
await mkdir(logDir, { recursive: true });
const failures: string[] = [];
try {
  await withFreshPlane(
    async (plane) => {
      const namespace = await benchNamespace(plane.kc, 'bench-memory');
      const dueMs = Date.now() + YEAR_MS;
      const createStart = Date.now();
      await createAts(
        plane.admin,
        namespace,
        Array.from({ length: N }, () => dueMs),
      );
      out(`created ${N} Ats in ${((Date.now() - createStart) / 1000).toFixed(1)} s`);

      const unsharded = await unshardedPhase(plane, bundle, namespace, logDir);
      out(`unsharded measured: ${unsharded.ats} Ats, heap ${mib(unsharded.heapBytes)}`);
      const { measures, buckets, modes } = await shardedPhase(plane, bundle, namespace, logDir);
      out(`ring settled: ${[...buckets].map(([id, held]) => `${id} ${held.length} buckets`).join(', ')}`);
      out(`shard mode: ${[...modes].map(([id, mode]) => `${id} ${mode}`).join(', ')}`);
      if (measures.length === 0) {
        failures.push('a sharded replica did not run with server-side shard selectors');
        return;
      }
      table(unsharded, measures, buckets);
      const sum = (pick: (m: Measure) => number): number => measures.reduce((s, m) => s + pick(m), 0);
      const meanHeap = sum((m) => m.heapBytes) / SHARDED;
      const meanAts = sum((m) => m.ats) / SHARDED;
      // A line through the two phases (heap = fixed + perAt * Ats cached): what one cached At costs
      // (its object, its key in the workqueue's delay heap, its index entries) and what does not scale.
      const perAt = (unsharded.heapBytes - meanHeap) / (unsharded.ats - meanAts);
      out(
        `sum of sharded Ats cached ${sum((m) => m.ats)} (N = ${N}); mean sharded heap / unsharded ` +
          `${(meanHeap / unsharded.heapBytes).toFixed(2)}; from the two phases: ${(perAt / 1024).toFixed(2)} KiB ` +
          `per cached At above ${mib(unsharded.heapBytes - perAt * unsharded.ats)} that does not scale with N`,
      );
      for (const m of measures)
        if (m.ats > N / 2) failures.push(`${m.replica} caches ${m.ats} Ats, more than half of ${N}`);
    },
    undefined,
    ['--feature-gates=ShardedListAndWatch=true'],
  );
  out(`replicas' logs in ${logDir}`);
} finally {
  await bundle.remove();
}
for (const failure of failures) out(`FAIL: ${failure}`);
if (failures.length > 0) process.exitCode = 1;
