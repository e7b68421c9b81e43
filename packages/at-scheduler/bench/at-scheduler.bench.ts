/**
 * N Ats (default 10,000) due within a 10 s window, on a fresh local control plane, controller in-process.
 *
 *   pnpm bench                       # 10,000 Ats
 *   AT_BENCH_COUNT=1000 pnpm bench   # quicker
 *   AT_BENCH_QPS / AT_BENCH_BURST    # the controller's client-side rate limit (default 1000/2000; production default 20/30)
 *   AT_BENCH_WORKERS                 # concurrent reconciles (default 50; production default 10)
 *
 * Lateness is measured on the client side, at two points, both against the At's schedule:
 * - decided: when the reconciler decided to start and called create (before the client's rate limiter);
 * - created: when the API server answered the pod create (includes rate-limiter waits and the request).
 * Pod creationTimestamp has one-second precision, so it cannot measure sub-second lateness.
 * Client-side throttling (requests that waited for a rate-limiter token, and the total wait) is reported
 * separately, from the controller client's counters. Heap per pending At: heap after every At is cached
 * and waiting (after a full GC) minus the heap of the synced, empty controller, divided by N.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KubeConfig } from '@kubernetes/client-node';
import { createMetrics } from '@loopwright/metrics';
import { createTestNamespace, startControlPlane } from '@loopwright/testing';
import { kubeAtApi, type AtApi } from '../src/api.ts';
import { createAtControllers } from '../src/controller.ts';
import { installCrd } from '../src/crd.ts';
import { KubeClient, Manager, createSilentLogger } from '@loopwright/runtime';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const N = Number(process.env.AT_BENCH_COUNT ?? 10_000);
const QPS = Number(process.env.AT_BENCH_QPS ?? 1000);
const BURST = Number(process.env.AT_BENCH_BURST ?? 2000);
const WORKERS = Number(process.env.AT_BENCH_WORKERS ?? 50);
const WINDOW_MS = 10_000;

function heapMb(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed / 1_048_576;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function summary(label: string, values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${label.padEnd(40)} n=${sorted.length} p50=${percentile(sorted, 50).toFixed(0)} ms  p99=${percentile(sorted, 99).toFixed(0)} ms  max=${(sorted.at(-1) ?? Number.NaN).toFixed(0)} ms`;
}

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

const out = (line: string): boolean => process.stdout.write(`${line}\n`);
out(
  `at-scheduler bench: ${N} Ats due within ${WINDOW_MS / 1000} s; controller: ${WORKERS} workers, client ${QPS} qps / burst ${BURST}`,
);
const plane = await startControlPlane();
try {
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  const admin = new KubeClient(kc, { rateLimit: false });
  await installCrd(admin);
  const ns = await createTestNamespace(kc, 'bench');

  const manager = new Manager({
    kubeConfig: kc,
    logger: createSilentLogger(),
    metrics: createMetrics({ defaultMetrics: false }),
    health: false,
    rateLimit: { qps: QPS, burst: BURST },
  });
  // Status writes, pod creates and Events all share the manager's client and its rate limiter.
  const client = manager.client;
  const recorder = manager.eventRecorder('loopwright.dev/at-scheduler');
  const decided = new Map<string, number>();
  const created = new Map<string, number>();
  const api = kubeAtApi(client);
  let pendingRecorded = 0;
  const timedApi: AtApi = {
    ...api,
    patchAtStatus: (namespace, name, status, rv, signal) => {
      if (status.phase === 'PENDING') pendingRecorded++;
      return api.patchAtStatus(namespace, name, status, rv, signal);
    },
    createPod: async (namespace, pod, signal) => {
      const result = await api.createPod(namespace, pod, signal);
      created.set(pod.metadata?.name ?? '', Date.now());
      return result;
    },
  };
  const schedules = new Map<string, number>();
  for (const controller of createAtControllers({
    manager,
    api: timedApi,
    recorder,
    namespaces: [ns.name],
    workers: WORKERS,
    defaultImage: 'busybox:1.37.0',
    onStart: (o) => decided.set(o.name, o.issuedMs - o.scheduleMs),
  }))
    manager.add(controller);
  const abort = new AbortController();
  const running = manager.start(abort.signal);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const heapEmpty = heapMb();

  // Creating N Ats and recording each as PENDING must finish before the window opens.
  const leadMs = 20_000 + N * 6;
  const windowStart = Date.now() + leadMs;
  const names = Array.from({ length: N }, (_, i) => `at-${i}`);
  names.forEach((name, i) => schedules.set(name, windowStart + Math.floor((i * WINDOW_MS) / N)));
  const createStarted = Date.now();
  await pool(names, 32, async (name) => {
    await admin.requestJson(
      'POST',
      `/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/${ns.name}/ats`,
      {
        body: {
          apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
          kind: 'At',
          metadata: { name },
          spec: { schedule: new Date(schedules.get(name) ?? 0).toISOString(), command: 'true' },
        },
      },
    );
  });
  out(`created ${N} Ats in ${((Date.now() - createStarted) / 1000).toFixed(1)} s`);
  while (pendingRecorded < N && Date.now() < windowStart - 2000)
    await new Promise((resolve) => setTimeout(resolve, 100));
  out(
    `${pendingRecorded} recorded PENDING after ${((Date.now() - createStarted) / 1000).toFixed(1)} s; window opens in ${((windowStart - Date.now()) / 1000).toFixed(1)} s`,
  );
  const heapPending = heapMb();
  const throttleBefore = client.stats();
  const cpuBefore = process.cpuUsage();
  const wallBefore = Date.now();
  if (Date.now() > windowStart)
    out('WARNING: the window opened before every At was created; lateness includes the backlog');

  const deadline = windowStart + WINDOW_MS + 600_000;
  while (created.size < N && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
  const throttleAfter = client.stats();
  const cpu = process.cpuUsage(cpuBefore);
  const wallS = (Date.now() - wallBefore) / 1000;
  abort.abort();
  await running;

  const createdLateness = [...created].map(
    ([pod, at]) => at - (schedules.get(pod.replace(/-pod$/, '')) ?? 0),
  );
  out(`pods created: ${created.size}/${N}`);
  out(summary('lateness, decided (before rate limiter)', [...decided.values()]));
  out(summary('lateness, created (API server answered)', createdLateness));
  out(
    `bench process (controller) CPU until the last pod: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s over ${wallS.toFixed(1)} s wall; ${(N / Math.max(1, (Math.max(...created.values()) - windowStart) / 1000)).toFixed(0)} starts/s after the window opened`,
  );
  out(`early starts: ${[...decided.values()].filter((ms) => ms < 0).length}`);
  out(
    `client-side throttling in the window: ${throttleAfter.throttledRequests - throttleBefore.throttledRequests} of ${throttleAfter.requests - throttleBefore.requests} requests waited, ${(throttleAfter.rateLimiterWaitSeconds - throttleBefore.rateLimiterWaitSeconds).toFixed(1)} s total wait`,
  );
  out(
    `client-side throttling overall: ${throttleAfter.throttledRequests} of ${throttleAfter.requests} requests waited, ${throttleAfter.rateLimiterWaitSeconds.toFixed(1)} s total wait`,
  );
  out(
    `heap: ${heapEmpty.toFixed(1)} MB synced and empty, ${heapPending.toFixed(1)} MB with ${N} pending Ats => ${(((heapPending - heapEmpty) * 1_048_576) / N / 1024).toFixed(2)} KiB per pending At (bench process; includes the At cache and the delayed queue)`,
  );
  await admin.close();
} finally {
  await plane.stop();
}
