/**
 * The limit program's side of a run, and the sweep that picks its concurrency. Its Ats are created in a
 * fresh namespace as the controller's are; it is handed each At's resourceVersion as the create returned
 * it, the claim the controller would write (claimStatus) and the pod it would create (buildPod), and makes
 * only the two writes of a start. Informed, it first caches what the controller caches (its Ats, and its
 * pods by label), as any informer-based controller must: the same writes, plus the watches' cost to the
 * API server and to the program.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '@loopwright/runtime';
import { POD_SELECTOR, buildPod, claimStatus, podNameFor } from '../src/index.ts';
import { profileApiServer } from './apiserver-profile.ts';
import { benchNamespace, createAts, windowSchedules, type SetUp } from './ats.ts';
import { runLimitProgram, type LimitResult } from './limit-program.ts';
import type { Start } from './starts.ts';

export interface LimitContext {
  kc: KubeConfig;
  kubeconfigPath: string;
  admin: KubeClient;
  binary: string;
  defaultImage: string;
}

interface LimitRun {
  results: LimitResult[];
  startMs: number;
  /** When the last At had been created. */
  createdMs: number;
  /** How long creating the Ats took, per At. */
  createMsPerAt: number;
}

/** The limit program alone, or informed: with the controller's caches (see the module comment). */
export type LimitVariant = 'writes only' | 'informed';

async function runLimit(
  context: LimitContext,
  concurrency: number,
  schedules: number[],
  variant: LimitVariant,
): Promise<LimitRun> {
  const startMs = Date.now();
  const namespace = await benchNamespace(context.kc, 'bench-limit');
  const createStartMs = Date.now();
  const stored = await createAts(context.admin, namespace, schedules);
  const createdMs = Date.now();
  const results = await runLimitProgram(context.binary, {
    kubeconfig: context.kubeconfigPath,
    namespace,
    concurrency,
    watch: variant === 'informed',
    podSelector: POD_SELECTOR,
    ats: stored.map((at, i) => {
      const podName = podNameFor(at.metadata.name);
      return {
        name: at.metadata.name,
        resourceVersion: at.metadata.resourceVersion,
        scheduleMs: schedules[i] ?? 0,
        claim: claimStatus(at, podName, new Date()),
        pod: buildPod(at, podName, { defaultImage: context.defaultImage }),
      };
    }),
  });
  return { results, startMs, createdMs, createMsPerAt: (createdMs - createStartMs) / schedules.length };
}

/** `failedStep code` -> how many Ats stopped there. */
function failuresOf(results: readonly LimitResult[]): Map<string, number> {
  const failures = new Map<string, number>();
  for (const r of results)
    if (r.failedStep) {
      const key = `${r.failedStep} ${r.code ?? r.error ?? ''}`;
      failures.set(key, (failures.get(key) ?? 0) + 1);
    }
  return failures;
}

export interface BurstOutcome {
  concurrency: number;
  started: number;
  /** Started / (last create answered - first claim sent). */
  startsPerSecond: number;
  createMsPerAt: number;
  failures: Map<string, number>;
}

/** `n` Ats all due at once (at their creation): how fast the limit program starts them at `concurrency`. */
export async function limitBurst(
  context: LimitContext,
  concurrency: number,
  n: number,
): Promise<BurstOutcome> {
  const due = Date.now();
  const run = await runLimit(context, concurrency, new Array<number>(n).fill(due), 'writes only');
  const started = run.results.filter((r) => !r.failedStep);
  const firstSent = Math.min(...run.results.map((r) => r.claimSentMs));
  const lastAnswered = Math.max(...started.map((r) => r.createAnsweredMs));
  return {
    concurrency,
    started: started.length,
    startsPerSecond: started.length / ((lastAnswered - firstSent) / 1000),
    createMsPerAt: run.createMsPerAt,
    failures: failuresOf(run.results),
  };
}

export interface LimitOutcome {
  setUp: SetUp;
  starts: Start[];
  failures: Map<string, number>;
}

/** `n` Ats due over `windowMs`, which opens `leadMs` from now. */
export async function runLimitPhase(
  context: LimitContext,
  options: { concurrency: number; n: number; windowMs: number; leadMs: number; variant: LimitVariant },
): Promise<LimitOutcome> {
  const windowOpenMs = Date.now() + options.leadMs;
  const profile = profileApiServer(
    context.admin,
    process.env.AT_BENCH_APISERVER_PROFILE,
    `apiserver-limit${options.variant === 'informed' ? '-informed' : ''}-n${options.n}-${windowOpenMs}`,
    windowOpenMs,
  );
  const run = await runLimit(
    context,
    options.concurrency,
    windowSchedules(options.n, windowOpenMs, options.windowMs),
    options.variant,
  );
  await profile;
  return {
    setUp: { startMs: run.startMs, createdMs: run.createdMs, windowOpenMs },
    starts: run.results.filter((r) => !r.failedStep),
    failures: failuresOf(run.results),
  };
}
