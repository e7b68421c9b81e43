/**
 * Starts a second with 1 and with 3 sharded replicas of at-scheduler, against the limit program, in one
 * run (issue 39, "Done when" 2b).
 *
 *   pnpm exec node --conditions=development bench/sharded-throughput.bench.ts
 *   AT_SHARDED_COUNT=10000                 # N, Ats due evenly over a 10 s window (this default)
 *   AT_BENCH_LIMIT_CONCURRENCY=16          # the limit program's concurrency (at-scheduler.bench.ts's pick)
 *   AT_SHARDED_CREATE_MS=2                 # the cost of creating an At assumed for the lead before the window
 *   AT_BENCH_CPUS=split|shared             # as at-scheduler.bench.ts (split by default)
 *   AT_SHARDED_LOG_DIR=<dir>               # where the replicas' logs stay (a temp dir)
 *   AT_BENCH_SHARDING_GATE=off|on|both     # the API server's ShardedListAndWatch for the replicas (both)
 *
 * Phases, each on a control plane of its own (bench/plane.ts), one after the other: the limit program
 * (bench/limit, writes only: the claim and the pod create of each At, at the concurrency above, as
 * at-scheduler.bench.ts runs it); then per gate setting 1 sharded replica and 3 sharded replicas. The replicas are the released
 * program (bench/sharded-replica.ts: the image's bundle, SHARDING=true, the program's defaults otherwise:
 * member Leases 15 s / 10 s / 2 s, 16 workers each; logs at info), started and left until each has taken its
 * buckets and no hand-off was logged for 3 s; then this process creates the N Ats, due evenly over a 10 s
 * window that opens after a lead long enough for the creates and one reconcile each. A start's time is
 * its 'started the command' line (logged when the pod create answered, as the limit program times its
 * create); starts/s = Ats started / (last start - window open), lateness = start - schedule.
 *
 * What bounds each. The CPU lines are CPU obtained (/proc), not CPU wanted: on a machine whose run queue
 * is long, a process that waits for a core shows little CPU and is still bound by it.
 * - the limit program: the API server. It makes only the two writes of each start, on client-go with
 *   no client-side limit, 16 in flight; it waits on kube-apiserver and etcd, which do nothing else;
 * - 1 replica: the same API server, plus what the controller adds per start (a reconcile, a third write
 *   (the Started Event), the watch events of its Ats and pods, its JSON log), with 16 workers in flight at
 *   most. On a quiet machine that is still the API server: kube-apiserver spends about 6 ms of its one
 *   core per start in every phase (the limit program's two writes 5.7 ms, the controller's three 5.9 to
 *   6.3 ms), so 150-odd starts/s is its ceiling; the controller's own process takes 1.8 to 1.9 ms a start
 *   on the other core. On a loaded machine workers / time per start bounds it first (16 / 83.8 starts/s
 *   = 191 ms a start in the busy run below, against 16 / 158 = 101 ms for the limit program);
 * - 3 replicas: the same API server, which all three share, plus what sharding adds to it. With the
 *   ShardedListAndWatch gate off every replica lists and watches every At and every pod, so the server
 *   encodes and sends each event three times and each replica decodes all of them to drop two thirds.
 *   With the gate on each replica lists and watches only its own Ats (its pods are still watched whole:
 *   the server cannot select them by their owner's uid). 48 workers in flight instead of 16 only help
 *   where the server had room, and it had little: at-scheduler's starts are API writes, so sharding
 *   spreads its work over processes but cannot raise the API server's limit. The three replicas' own CPU
 *   per start (2.7 to 2.9 ms together, against 1.8 to 1.9 for one) is what sharding costs.
 *
 * One run on 2026-11-29 (the development machine, 2 cores, quiet but for the bench;
 * AT_SHARDED_LOG_DIR=/tmp/thr-s5): limit program 151.7 starts/s; gate off: 1 replica 135.0 (0.89x),
 * 3 replicas 142.6 (0.94x); gate on (server-side shard selectors): 1 replica 144.4 (0.95x), 3 replicas
 * 142.8 (0.94x); every At started once in every phase. An earlier run, with the gate off only, beside a
 * soak bench and another cluster (CPU pressure "some" 51-70 %): limit 158.2, 1 replica 83.8 (0.53x),
 * 3 replicas 50.1 (0.32x) with 6,493 of 10,000 started within 120 s after the window closed: three
 * in-replica replicas then fought the soak for the contenders' core.
 *
 * Indicative figures: one run, on a busy 2-core machine.
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchNamespace, createAts, windowSchedules } from './ats.ts';
import { HANDOFF_MESSAGES, parseLog, type LogLine } from './churn-log.ts';
import { bundleReleasedProgram, type ControllerBundle } from './controller-bundle.ts';
import { CpuSampler, formatCpuPerStart } from './cpu-sampler.ts';
import { cpuPlacement } from './cpus.ts';
import { runLimitPhase } from './limit-phase.ts';
import { ensureLimitProgram } from './limit-program.ts';
import { withFreshPlane, type BenchPlane } from './plane.ts';
import { ShardedReplica } from './sharded-replica.ts';
import { figuresOf, formatFigures } from './starts.ts';
import { DEFAULT_IMAGE } from '../src/index.ts';
import { percentile } from './stats.ts';

const N = Number(process.env.AT_SHARDED_COUNT ?? 10_000);
const CONCURRENCY = Number(process.env.AT_BENCH_LIMIT_CONCURRENCY ?? 16);
const CREATE_MS = Number(process.env.AT_SHARDED_CREATE_MS ?? 2);
const WINDOW_MS = 10_000;
/** Creating the Ats, then one reconcile of each (no write), before the window opens. */
const LEAD_MS = 10_000 + 3 * N * CREATE_MS;
const SETTLED_MS = 3000;
const WAIT_MS = 120_000;
const GATES = { off: [], on: ['--feature-gates=ShardedListAndWatch=true'] } as const;
type Gate = keyof typeof GATES;
const GATE_SETTING = process.env.AT_BENCH_SHARDING_GATE ?? 'both';
if (!['off', 'on', 'both'].includes(GATE_SETTING)) {
  throw new Error(`AT_BENCH_SHARDING_GATE must be off, on or both, not ${JSON.stringify(GATE_SETTING)}`);
}
const gates: Gate[] = GATE_SETTING === 'both' ? ['off', 'on'] : [GATE_SETTING as Gate];

const out = (line: string): boolean => process.stdout.write(`${line}\n`);

interface Outcome {
  started: number;
  startsPerSecond: number;
  line: string;
}

/** N Ats for `replicas` sharded replicas: their starts from their logs. */
async function shardedPhase(
  plane: BenchPlane,
  bundle: ControllerBundle,
  replicas: number,
  gate: Gate,
  logDir: string,
  cpu: CpuSampler,
): Promise<Outcome> {
  const namespace = await benchNamespace(plane.kc, `bench-sharded-${gate}-${replicas}`);
  const running = await Promise.all(
    Array.from({ length: replicas }, (_, i) =>
      ShardedReplica.start({
        main: bundle.main,
        kubeconfigPath: plane.kubeconfigPath,
        namespace,
        ring: 'throughput',
        identity: `replica-${i}`,
        logPath: join(logDir, `gate-${gate}-${replicas}-replicas-${i}.log`),
        logLevel: 'info',
      }),
    ),
  );
  try {
    await Promise.all(running.map((replica) => replica.logged('took buckets', WAIT_MS)));
    await settled(running);
    const modes = new Set(
      (await Promise.all(running.map(async (replica) => parseLog(await replica.log()))))
        .flat()
        .flatMap(({ message }) =>
          message.startsWith('running sharded: ') ? [message.split(':')[1]?.trim()] : [],
        ),
    );
    const windowOpenMs = Date.now() + LEAD_MS;
    const schedules = windowSchedules(N, windowOpenMs, WINDOW_MS);
    const setUpStart = Date.now();
    await createAts(plane.admin, namespace, schedules);
    const createdMs = Date.now();
    const deadline = windowOpenMs + WINDOW_MS + WAIT_MS;
    let starts: Map<string, number[]> = new Map();
    while (Date.now() < deadline) {
      starts = startsOf(await Promise.all(running.map(async (replica) => parseLog(await replica.log()))));
      if (starts.size >= N) break;
      await sleep(1000);
    }
    const started = [...starts].map(([name, times]) => ({ name, ms: Math.min(...times) }));
    const twice = [...starts.values()].filter((times) => times.length > 1).length;
    const lastMs = Math.max(...started.map((start) => start.ms));
    const lateness = started.map(({ name, ms }) => ms - (schedules[Number(name.slice('at-'.length))] ?? 0));
    const startsPerSecond = started.length / ((lastMs - windowOpenMs) / 1000);
    const exited = running.filter((replica) => !replica.running);
    return {
      started: started.length,
      startsPerSecond,
      line:
        `mode ${[...modes].join(' + ') || 'NONE LOGGED'}: ` +
        `${started.length}/${N} started${twice > 0 ? ` (${twice} TWICE)` : ''}, ${startsPerSecond.toFixed(1)} starts/s, ` +
        `lateness p50 ${percentile(lateness, 50)} ms p99 ${percentile(lateness, 99)} ms; set-up: created in ` +
        `${((createdMs - setUpStart) / 1000).toFixed(1)} s, ${createdMs < windowOpenMs ? 'before' : 'NOT before'} the window opened` +
        (exited.length === 0
          ? ''
          : `; EXITED by themselves (lost their member Lease): ${exited.map((r) => `${r.identity} ${r.exit}`).join(', ')}`) +
        '\n' +
        `    ${formatCpuPerStart(cpu.between(windowOpenMs, lastMs), started.length)}`,
    };
  } finally {
    await Promise.all(running.map((replica) => replica.stop(60_000)));
  }
}

/** Until no replica logged a hand-off for SETTLED_MS. */
async function settled(replicas: readonly ShardedReplica[]): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const logs = await Promise.all(replicas.map(async (replica) => parseLog(await replica.log())));
    const last = Math.max(
      ...logs.flat().flatMap((line) => (HANDOFF_MESSAGES.has(line.message) ? [line.ms] : [])),
    );
    if (Date.now() - last >= SETTLED_MS) return;
    await sleep(500);
  }
  throw new Error('the ring did not settle');
}

/** Per At name, the times of its 'started the command' lines in all logs. */
function startsOf(logs: readonly (readonly LogLine[])[]): Map<string, number[]> {
  const starts = new Map<string, number[]>();
  for (const line of logs.flat())
    if (line.message === 'started the command' && line.name !== undefined)
      starts.set(line.name, [...(starts.get(line.name) ?? []), line.ms]);
  return starts;
}

const placement = cpuPlacement();
out(
  `sharded throughput bench: N = ${N} Ats due within ${WINDOW_MS / 1000} s; the limit program at concurrency ` +
    `${CONCURRENCY}, then 1 and 3 sharded replicas (16 workers each) with ShardedListAndWatch ${gates.join(', then ')}. ` +
    `${placement.describe()}. ` +
    'Indicative: one run on a busy 2-core machine.',
);
const cpu = new CpuSampler();
const binary = await ensureLimitProgram(out);
const bundle = await bundleReleasedProgram();
const logDir = process.env.AT_SHARDED_LOG_DIR ?? (await mkdtemp(join(tmpdir(), 'at-sharded-')));
await mkdir(logDir, { recursive: true });
try {
  const limit = await withFreshPlane(async (plane) => {
    const outcome = await runLimitPhase(
      { ...plane, binary, defaultImage: DEFAULT_IMAGE },
      { concurrency: CONCURRENCY, n: N, windowMs: WINDOW_MS, leadMs: LEAD_MS, variant: 'writes only' },
    );
    const figures = figuresOf(outcome.starts, outcome.setUp.windowOpenMs);
    const lastMs = Math.max(...outcome.starts.map((start) => start.createAnsweredMs));
    return {
      started: figures.started,
      startsPerSecond: figures.startsPerSecond,
      line:
        `${formatFigures(figures, N)}\n    ` +
        formatCpuPerStart(cpu.between(outcome.setUp.windowOpenMs, lastMs), figures.started),
    };
  }, placement);
  out(`limit program c=${CONCURRENCY}: ${limit.line}`);
  for (const gate of gates) {
    for (const replicas of [1, 3]) {
      const outcome = await withFreshPlane(
        (plane) => shardedPhase(plane, bundle, replicas, gate, logDir, cpu),
        placement,
        [...GATES[gate]],
      );
      out(`gate ${gate}, ${replicas} sharded replica(s): ${outcome.line}`);
      out(`    / limit program: ${(outcome.startsPerSecond / limit.startsPerSecond).toFixed(2)}x`);
    }
  }
  out(`replicas' logs in ${logDir}`);
} finally {
  cpu.stop();
  await bundle.remove();
}
