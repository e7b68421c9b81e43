/**
 * at-scheduler against the API server's own limit, on one fresh local control plane.
 *
 *   pnpm bench                                          # N = 1,000, 2,000 and 10,000; 3 runs each
 *   AT_BENCH_COUNTS=1000 AT_BENCH_RUNS=1 pnpm bench     # quicker
 *   AT_BENCH_LIMIT_CONCURRENCY=8,16,32,64,128           # the limit program's sweep (one value: no choice)
 *   AT_BENCH_CALIBRATION_COUNT=1000                     # Ats per sweep point
 *   WORKERS, KUBE_API_QPS, KUBE_API_BURST               # the controller's own variables, as in a pod
 *   AT_BENCH_CPU_PROFILE=<dir>                          # V8 profile of the controller's window
 *   AT_BENCH_APISERVER_PROFILE=<dir>                    # kube-apiserver's Go profile of each window
 *   AT_BENCH_CPUS=split|shared                          # the control plane on CPUs of its own (default), or not
 *
 * The limit: a Go program with client-go (bench/limit) that makes only the two writes a start needs, the
 * claim (the RUNNING status merge patch conditional on the At's resourceVersion, with claimStatus()'s body:
 * the controller's own, conditions included) then the pod create with buildPod()'s spec, with client-side
 * rate limiting off, at the concurrency that started a burst of due
 * Ats fastest in a sweep at the beginning. The informed limit program: the same, having first started
 * client-go informers on what the controller caches (the namespace's Ats, and its pods by the controller's
 * label selector) and with nothing done with their events: the writes of the limit, plus what any
 * informer-based controller pays to be told, so the two ratios part the cost of watching from the rest.
 * The controller: at-scheduler in a Node process of its own (bench/controller-process.ts, bundled as the
 * image's program is), as the limit programs run in theirs, with the released program's defaults (read from its option declarations; the
 * environment may override them, as it does the program's) and its real event recorder.
 *
 * Where each process runs (bench/cpus.ts): by default the control plane on half the machine's CPUs and
 * this process, the controller's and the limit programs on the other half, as in a cluster, where the API
 * server does not share its nodes' cores with the controllers: the ratio then compares what the contenders
 * get out of the same API server, not how much of the machine each leaves it.
 *
 * Each run, per N: the three contenders each get a fresh namespace and N Ats due evenly
 * over a 10 s window. The window opens after a lead sized from the sweep's cost of creating an At (and for
 * the controller, from its client rate) for the set-up to finish: the Ats created, and for the controller
 * each At reconciled and then the controller idle (no reconcile, API call or Event for 1 s); each phase's
 * "set-up" line says whether it finished before its window. No two
 * run at the same time, and which goes first rotates between runs. Each phase (and each point
 * of the sweep) gets a control plane of its own, started for it: on one long-lived control plane the API
 * server's CPU per start crept up over the bench (the limit program's from 4.1 to 6.5 ms over three
 * N = 10,000 runs, even with etcd compacted and defragmented before each phase), so whichever phase ran
 * later paid more.
 *
 * Figures per contender: starts/s = Ats started / (last pod create answered - window open); lateness =
 * pod create answered - schedule, in three parts: due->claim sent (the wait for a worker, or a backlog),
 * the claim's round trip, and claim->create = claim answered -> pod create answered, with the part
 * before the create was sent. For the controller, per start: status patches, pod creates, pod lookups,
 * 409s and Events created, counted from the window's opening until it stopped (with its Events flushed).
 * CPU per start, by process (this one, etcd, kube-apiserver, kube-controller-manager, the limit program or
 * the controller's, at-scheduler),
 * from the window's opening to the last start: the two cores are shared, so it explains the ratio. And
 * for the controller, its event loop's delay and GC pauses over the same span: whether a lateness tail
 * is the controller's process stalling or the server answering late.
 * Ratios are the controller's over the limit program's (the issue's figure), and over the informed limit
 * program's, in the same run; min/median/max over the runs.
 */
import { formatSetUp } from './ats.ts';
import { bundleControllerProcess } from './controller-bundle.ts';
import { CpuSampler, formatCpuPerStart } from './cpu-sampler.ts';
import { cpuPlacement } from './cpus.ts';
import { runControllerPhase, type ControllerOutcome } from './controller-phase.ts';
import { controllerSettings } from './controller-settings.ts';
import { ensureLimitProgram } from './limit-program.ts';
import { withFreshPlane, type BenchPlane } from './plane.ts';
import {
  limitBurst,
  runLimitPhase,
  type LimitContext,
  type LimitOutcome,
  type LimitVariant,
} from './limit-phase.ts';
import { Ratios } from './ratios.ts';
import { figuresOf, formatFigures, type Figures, type Start } from './starts.ts';

const numbers = (value: string): number[] => value.split(',').map((v) => Number(v.trim()));
const COUNTS = numbers(process.env.AT_BENCH_COUNTS ?? '1000,2000,10000');
const RUNS = Number(process.env.AT_BENCH_RUNS ?? 3);
const SWEEP = numbers(process.env.AT_BENCH_LIMIT_CONCURRENCY ?? '8,16,32,64,128');
const CALIBRATION_N = Number(process.env.AT_BENCH_CALIBRATION_COUNT ?? 1000);
const WINDOW_MS = 10_000;

const out = (line: string): boolean => process.stdout.write(`${line}\n`);
const settings = controllerSettings(process.env);
const placement = cpuPlacement();
out(
  `at-scheduler bench: N = ${COUNTS.join(', ')} Ats due within ${WINDOW_MS / 1000} s, ${RUNS} run(s) each; ` +
    `controller: ${settings.workers} workers, client ${settings.qps > 0 ? `${settings.qps} qps / burst ${settings.burst}` : 'not rate-limited'} ` +
    `(${settings.overrides.length === 0 ? "the program's defaults" : `set by ${settings.overrides.join(' ')}`})`,
);

out(placement.describe());

const cpu = new CpuSampler();
const binary = await ensureLimitProgram(out);
const controllerBundle = await bundleControllerProcess();

const limitContext = (plane: BenchPlane): LimitContext => ({
  ...plane,
  binary,
  defaultImage: settings.defaultImage,
});

try {
  out(`limit program sweep: ${CALIBRATION_N} Ats all due at once, per concurrency`);
  const bursts = [];
  for (const concurrency of SWEEP) {
    const burst = await withFreshPlane(
      (plane) => limitBurst(limitContext(plane), concurrency, CALIBRATION_N),
      placement,
    );
    bursts.push(burst);
    out(
      `  concurrency ${String(concurrency).padStart(4)}: ${burst.startsPerSecond.toFixed(1)} starts/s` +
        (burst.started < CALIBRATION_N
          ? `, ${burst.started} started; failures: ${failures(burst.failures)}`
          : ''),
    );
  }
  const best = bursts.reduce((a, b) => (b.startsPerSecond > a.startsPerSecond ? b : a));
  // Setting up Ats costs what it cost in the sweep; the leads below leave twice that or more.
  const createMsPerAt = Math.max(...bursts.map((b) => b.createMsPerAt));
  out(
    `limit program concurrency: ${best.concurrency} (the most starts/s of the sweep)` +
      `; creating an At took ${createMsPerAt.toFixed(2)} ms`,
  );

  for (const n of COUNTS) {
    const ratios = { limit: new Ratios(), informed: new Ratios() };
    for (let run = 0; run < RUNS; run++) {
      const limitPhase = (variant: LimitVariant) => (): Promise<LimitOutcome> =>
        withFreshPlane(
          (plane) =>
            runLimitPhase(limitContext(plane), {
              concurrency: best.concurrency,
              n,
              windowMs: WINDOW_MS,
              leadMs: 5000 + 2 * n * createMsPerAt,
              variant,
            }),
          placement,
        );
      const controllerPhase = (): Promise<ControllerOutcome> =>
        withFreshPlane(
          ({ kc, admin, kubeconfigPath }) =>
            runControllerPhase({
              main: controllerBundle.main,
              kc,
              admin,
              kubeconfigPath,
              settings,
              n,
              windowMs: WINDOW_MS,
              // Creating the Ats, then a reconcile each (no write: the CRD defaults the status), and with a
              // client rate limit room for a write per At at that rate.
              leadMs:
                10_000 + 3 * n * createMsPerAt + (settings.qps > 0 ? (1.5 * n * 1000) / settings.qps : 0),
            }),
          placement,
        );
      // Which goes first rotates between runs, so that none always runs on the freshest machine.
      const { limit, informed, controller } = await inTurn(
        { limit: limitPhase('writes only'), informed: limitPhase('informed'), controller: controllerPhase },
        run,
        (order) => out(`N=${n} run ${run + 1}/${RUNS} (${order.join(', then ')})`),
      );
      const limitFigures = reportLimit(`limit program c=${best.concurrency}`, limit, n);
      const informedFigures = reportLimit(`informed limit program c=${best.concurrency}`, informed, n);
      const controllerFigures = figuresOf(controller.starts, controller.setUp.windowOpenMs);
      out(`  controller: ${formatFigures(controllerFigures, n)}`);
      out(`    ${formatSetUp(controller.setUp, true)}`);
      out(`    ${perStart(controller, controllerFigures)}`);
      out(`    ${controller.loop}`);
      out(`    ${controller.gcInTail}`);
      out(`    ${windowCpu(controller.starts, controller.setUp.windowOpenMs)}`);
      out(`  ratio: ${ratios.limit.add(controllerFigures, limitFigures)}`);
      out(`  against the informed limit program: ${ratios.informed.add(controllerFigures, informedFigures)}`);
    }
    out(
      `N=${n} over ${RUNS} run(s), controller / limit program (min/median/max): ${ratios.limit.overRuns()}`,
    );
    out(
      `N=${n} over ${RUNS} run(s), controller / informed limit program (min/median/max): ${ratios.informed.overRuns()}`,
    );
  }
} finally {
  cpu.stop();
  await controllerBundle.remove();
}

/** CPU by process from the window's opening to the last start, per start. */
function windowCpu(starts: readonly Start[], windowOpenMs: number): string {
  const lastMs = Math.max(windowOpenMs, ...starts.map((start) => start.createAnsweredMs));
  return formatCpuPerStart(cpu.between(windowOpenMs, lastMs), starts.length);
}

/** `items` turned left `by` places. */
function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * Runs `phases` one at a time, in their order turned left `first` places (told to `announce` first);
 * resolves with each phase's outcome under its name.
 */
async function inTurn<T extends Record<string, () => Promise<unknown>>>(
  phases: T,
  first: number,
  announce: (order: string[]) => void,
): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  const order = rotate(Object.keys(phases), first);
  announce(order);
  const outcomes: Record<string, unknown> = {};
  for (const name of order) outcomes[name] = await phases[name]?.();
  return outcomes as { [K in keyof T]: Awaited<ReturnType<T[K]>> };
}

/** Prints a limit program's figures, set-up, CPU and failures; returns its figures. */
function reportLimit(label: string, outcome: LimitOutcome, n: number): Figures {
  const figures = figuresOf(outcome.starts, outcome.setUp.windowOpenMs);
  out(`  ${label}: ${formatFigures(figures, n)}`);
  out(`    ${formatSetUp(outcome.setUp, false)}`);
  out(`    ${windowCpu(outcome.starts, outcome.setUp.windowOpenMs)}`);
  if (outcome.failures.size > 0) out(`    failures: ${failures(outcome.failures)}`);
  return figures;
}

function failures(counts: Map<string, number>): string {
  return [...counts].map(([what, count]) => `${count} x ${what}`).join(', ');
}

function perStart(controller: ControllerOutcome, figures: Figures): string {
  const per = (count: number): string => (count / Math.max(1, figures.started)).toFixed(2);
  const w = controller.work;
  return (
    `per start: ${per(w.reconciles)} reconciles, ${per(w.statusPatches)} status patches, ${per(w.podCreates)} pod creates, ` +
    `${per(w.eventsCreated)} Events created (${per(w.eventsCreatedInWindow)} before the last start), ${per(w.podLookups)} pod GETs, ${per(w.conflicts)} 409s, ` +
    `${per(w.requestsInWindow)} requests of any kind before the last start; ` +
    `Events dropped ${controller.eventsDropped}, failed ${controller.eventsFailed}`
  );
}
