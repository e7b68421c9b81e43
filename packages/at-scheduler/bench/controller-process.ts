/**
 * The controller of the bench's controller phase, in a Node process of its own, as the released program
 * runs alone in its container and as each limit program runs in a process of its own: its heap, event
 * loop and garbage collector carry only the controller's work. In the bench's process the controller's
 * heap also held the bench's garbage (the Ats' set-up, the other phases' outcomes, the CPU sampler's
 * readings), and the major GCs that garbage brought on during a window were most of the controller's
 * lateness tail at N = 1,000.
 *
 * bench/controller-phase.ts forks this file, bundled as the image's program is (bench/controller-bundle.ts),
 * and talks to it over IPC:
 *
 *   bench -> controller  ControllerRun      what to run, against which control plane
 *   controller -> bench  WindowMessage      the manager has started; when the window opens
 *   controller -> bench  OutcomeMessage     once the window's starts are done and the manager has stopped
 *
 * The bench creates the Ats (set-up work stays in its own process); this process times the controller's
 * writes through a wrapped AtApi and status writer, counts its work, and watches its own event loop.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { createMetrics } from '@loopwright/metrics';
import {
  Manager,
  clientRateLimit,
  createSilentLogger,
  toKubeApiError,
  type Patch,
  type StatusWriter,
} from '@loopwright/runtime';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROLLER_NAME, createAtControllers, kubeAtApi, type At, type AtApi } from '../src/index.ts';

import { windowSchedules } from './ats.ts';
import type { ControllerSettings } from './controller-settings.ts';
import { gcInTail, monitorLoop } from './loop-monitor.ts';
import type { Start } from './starts.ts';
import { startWindowProfile } from './window-profile.ts';

/** The bench's request: one controller phase. */
export interface ControllerRun {
  kubeconfigPath: string;
  namespace: string;
  settings: ControllerSettings;
  n: number;
  windowMs: number;
  /** From the manager's start until the window opens: time to create the Ats and for the controller to record them. */
  leadMs: number;
}

export interface WindowMessage {
  kind: 'window';
  startMs: number;
  windowOpenMs: number;
}

export interface OutcomeMessage {
  kind: 'outcome';
  outcome: ControllerProcessOutcome;
}

/** Counted from the window's opening until the controller stopped, Events included. */
export interface ControllerWork {
  reconciles: number;
  statusPatches: number;
  podCreates: number;
  /** Live pod GETs (reads on the start path, when the cache has not seen a pod). */
  podLookups: number;
  /** Responses 409 (Conflict on a status patch, AlreadyExists on a create). */
  conflicts: number;
  eventsCreated: number;
  /**
   * Of those, the Events created by the time the controller saw its last pod create answered (it looks
   * every POLL_MS): written during the burst.
   */
  eventsCreatedInWindow: number;
  /**
   * Every request the controller's client sent (not its informers'), from the window's opening until it
   * saw its last pod create answered: the writes above plus anything else on the way.
   */
  requestsInWindow: number;
}

export interface ControllerProcessOutcome {
  /** Since when the controller has been idle, having reconciled every At; undefined if not before the window. */
  idleMs?: number;
  starts: Start[];
  work: ControllerWork;
  /** Events the recorder did not write (spam filter, invalid) during the whole phase. */
  eventsDropped: number;
  eventsFailed: number;
  /** The event loop's delay and GC pauses from the window's opening to the last start. */
  loop: string;
  /** How much of the slowest starts' lateness was this process's GC. */
  gcInTail: string;
}

const POLL_MS = 100;
/** The controller counts as idle once nothing it does has moved for this long. */
const IDLE_MS = 1000;

/** Runs one controller phase; `opened` is told when the window opens, right after the manager started. */
async function runController(
  run: ControllerRun,
  opened: (window: Omit<WindowMessage, 'kind'>) => void,
): Promise<ControllerProcessOutcome> {
  const { settings, n, windowMs, namespace } = run;
  const kc = new KubeConfig();
  kc.loadFromFile(run.kubeconfigPath);
  const manager = new Manager({
    kubeConfig: kc,
    logger: createSilentLogger(),
    metrics: createMetrics({ defaultMetrics: false }),
    health: false,
    rateLimit: clientRateLimit({ kubeApiQps: settings.qps, kubeApiBurst: settings.burst }),
  });
  const recorder = manager.eventRecorder(`loopwright.dev/${CONTROLLER_NAME}`);
  const timed = timedAtApi(kubeAtApi(manager.client));
  for (const controller of createAtControllers({
    manager,
    api: timed.api,
    wrapStatusWriter: timed.wrapStatusWriter,
    recorder,
    namespaces: [namespace],
    workers: settings.workers,
    defaultImage: settings.defaultImage,
  }))
    manager.add(controller);
  const abort = new AbortController();
  const running = manager.start(abort.signal);

  const startMs = Date.now();
  const windowOpenMs = startMs + run.leadMs;
  const schedules = windowSchedules(n, windowOpenMs, windowMs);
  opened({ startMs, windowOpenMs });
  const reconciles = (): Promise<number> => reconcileTotal(manager);
  const eventsCreated = (): number => recorder.stats().created;
  // Taken by a timer, not by the set-up loop below, so it is taken when the window opens and not after.
  const before = sleep(windowOpenMs - startMs).then(async () => ({
    ...timed.counts,
    eventsCreated: eventsCreated(),
    requests: manager.client.stats().requests,
    reconciles: await reconciles(),
  }));
  // Anything the controller does for a new At: a reconcile, an API call, an Event.
  const activity = async (): Promise<number> => {
    const events = recorder.stats();
    const calls = Object.values(timed.counts).reduce((a, b) => a + b, 0);
    return (
      (await reconciles()) + calls + events.created + events.patched + events.aggregated + events.dropped
    );
  };
  let idleMs: number | undefined;
  let last = { activity: await activity(), ms: Date.now() };
  while (Date.now() < windowOpenMs && idleMs === undefined) {
    await sleep(POLL_MS);
    const now = { activity: await activity(), ms: Date.now() };
    if (now.activity !== last.activity) last = now;
    if (now.ms - last.ms >= IDLE_MS && (await reconciles()) >= n) idleMs = last.ms;
  }
  const atOpen = await before;
  const profile = await startWindowProfile(process.env.AT_BENCH_CPU_PROFILE);
  const loop = monitorLoop();

  // Generous: every start's two writes at the client's rate, three times over.
  const clientQps = settings.qps > 0 ? settings.qps : Infinity;
  const deadline = windowOpenMs + windowMs + Math.max(120_000, (3 * n * 2 * 1000) / clientQps);
  while (timed.createAnswered.size < n && Date.now() < deadline) await sleep(POLL_MS);
  const eventsCreatedInWindow = eventsCreated() - atOpen.eventsCreated;
  const requestsInWindow = manager.client.stats().requests - atOpen.requests;
  const loopFigures = loop.stop();
  await profile?.stop(`controller-n${n}-${windowOpenMs}`);
  abort.abort();
  // Stopping flushes the recorder: the Events of the last starts are written before this resolves.
  await running;

  const final = recorder.stats();
  const starts = schedules.flatMap((dueMs, i): Start[] => {
    const name = `at-${i}`;
    const claimSentMs = timed.claimSent.get(name);
    const claimAnsweredMs = timed.claimAnswered.get(name);
    const createSentMs = timed.createSent.get(name);
    const createAnsweredMs = timed.createAnswered.get(name);
    return claimSentMs === undefined ||
      claimAnsweredMs === undefined ||
      createSentMs === undefined ||
      createAnsweredMs === undefined
      ? []
      : [{ dueMs, claimSentMs, claimAnsweredMs, createSentMs, createAnsweredMs }];
  });
  return {
    idleMs,
    starts,
    work: {
      reconciles: (await reconciles()) - atOpen.reconciles,
      statusPatches: timed.counts.statusPatches - atOpen.statusPatches,
      podCreates: timed.counts.podCreates - atOpen.podCreates,
      podLookups: timed.counts.podLookups - atOpen.podLookups,
      conflicts: timed.counts.conflicts - atOpen.conflicts,
      eventsCreated: final.created - atOpen.eventsCreated,
      eventsCreatedInWindow,
      requestsInWindow,
    },
    eventsDropped: final.dropped,
    eventsFailed: final.failed,
    loop: loopFigures.line,
    gcInTail: gcInTail(
      starts.map((start) => ({ startMs: start.dueMs, endMs: start.createAnsweredMs })),
      loopFigures.pauses,
    ),
  };
}

/** `controller_runtime_reconcile_total`, every result: this manager has its own registry. */
async function reconcileTotal(manager: Manager): Promise<number> {
  const metric = manager.metrics.registry.getSingleMetric('controller_runtime_reconcile_total');
  const { values } = (await metric?.get()) ?? { values: [] };
  return values.reduce((sum, { value }) => sum + value, 0);
}

/**
 * The controller's AtApi and status writes, recording when each At's claim and create were answered,
 * and counting calls.
 */
function timedAtApi(api: AtApi) {
  const counts = { statusPatches: 0, podCreates: 0, podLookups: 0, conflicts: 0 };
  const claimSent = new Map<string, number>();
  const claimAnswered = new Map<string, number>();
  const createSent = new Map<string, number>();
  const createAnswered = new Map<string, number>();
  const counting409 = (error: unknown): never => {
    if (toKubeApiError(error)?.status === 409) counts.conflicts++;
    throw error;
  };
  const wrapStatusWriter = (status: StatusWriter<At>, at: { name: string }): StatusWriter<At> => ({
    patch: async (patch, options) => {
      counts.statusPatches++;
      const claim = isClaim(patch);
      if (claim) claimSent.set(at.name, Date.now());
      const written = await status.patch(patch, options).catch(counting409);
      if (claim) claimAnswered.set(at.name, Date.now());
      return written;
    },
  });
  const timed: AtApi = {
    createPod: async (pod, signal) => {
      counts.podCreates++;
      // buildPod's controller owner reference names the At.
      const at = pod.metadata?.ownerReferences?.[0]?.name ?? '';
      createSent.set(at, Date.now());
      await api.createPod(pod, signal).catch(counting409);
      createAnswered.set(at, Date.now());
    },
    getPod: (namespace, name, signal) => {
      counts.podLookups++;
      return api.getPod(namespace, name, signal);
    },
    deletePod: (namespace, name, uid, signal) => api.deletePod(namespace, name, uid, signal),
    releasePod: (pod, signal) => api.releasePod(pod, signal),
  };
  return {
    api: timed,
    wrapStatusWriter,
    counts,
    claimSent,
    claimAnswered,
    createSent,
    createAnswered,
  };
}

/** The claim: the status write that records RUNNING (the reconciler's status patches are merge patches). */
function isClaim(patch: Patch): boolean {
  return 'merge' in patch && (patch.merge as { status?: { phase?: string } }).status?.phase === 'RUNNING';
}

// Run as the bench's child (forked with an IPC channel): one phase, then exit.
if (import.meta.main && process.send) {
  // Its CPU line in the bench's report goes by this name (/proc/<pid>/stat), not by `node`.
  process.title = 'at-scheduler';
  const run = await new Promise<ControllerRun>((resolve) => process.once('message', resolve));
  const outcome = await runController(run, (window) => process.send?.({ kind: 'window', ...window }));
  const message: OutcomeMessage = { kind: 'outcome', outcome };
  process.send(message, () => {
    process.disconnect();
  });
}
