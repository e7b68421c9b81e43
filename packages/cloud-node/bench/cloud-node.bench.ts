/**
 * Hetzner API cost of the cloud-node controllers with 500 Nodes, against the fake API, with time scaled
 * up by SCALE (default 10): the 5 min address refresh runs every 300/SCALE s, the 5 s monitor period
 * every 5/SCALE s, the 55 s NotReady sweep period every 55/SCALE s, the fake's bucket refills SCALE
 * requests per second (the real 1/s, scaled) and answers after LATENCY_MS (default 15 ms: about the real
 * API's 150 ms, scaled). Requests per hour and seconds are reported in scaled (i.e. real-world) units.
 *
 *   pnpm bench        # SCALE=10 STEADY_S=60 NOTREADY_S=60 NODES=500 RUNS=3 LATENCY_MS=15
 *
 * Each of RUNS runs has two phases: (1) steady state, every Node Ready; (2) every Node NotReady (their
 * servers present: a CNI outage), starting with the bucket at 1000 of 3600 (other API users took the
 * rest); 10 s (real) in, one server is deleted at the worst moment, right after a sweep listed it, and
 * the time until its Node is gone is measured. Between runs the Nodes are Ready again and the deleted
 * server and its Node are replaced. Every figure is min/median/max over the runs, next to its baselines
 * from the same run: HCCM's cost, computed from its documented behaviour (uncached: 2 requests per
 * NotReady Node per 5 s, 1 per Node per 5 min), and the steady-state figure.
 */
import {
  isAlreadyExists,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
} from '@loopwright/client';
import { HcloudClient } from '@loopwright/hcloud';
import { createMetrics } from '@loopwright/metrics';
import { KubeClient, Manager, createSilentLogger } from '@loopwright/runtime';
import { NODES as NODE_RESOURCE, type Node } from '../src/node.ts';
import { reportReady } from '../src/node-status.test-support.ts';
import { startControlPlane } from '@loopwright/envtest';
import { startFakeHcloud, type FakeHcloudServer } from '@loopwright/fakes/hcloud';
import { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { RequestBudget } from '../src/budget.ts';
import { createNodeApi } from '../src/api.ts';
import { createCloudNodeControllers } from '../src/controller.ts';
import { ServerDirectory } from '../src/server-directory.ts';

const SCALE = Number(process.env.SCALE ?? 10);
const NODES = Number(process.env.NODES ?? 500);
const STEADY_S = Number(process.env.STEADY_S ?? 60);
const NOTREADY_S = Number(process.env.NOTREADY_S ?? 60);
const RUNS = Number(process.env.RUNS ?? 3);
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 15);
const NOT_READY_SWEEP_PERIOD_MS = 55_000;
const BUDGET_PER_HOUR = 3600;
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const controlPlane = await startControlPlane();
const fake = await startFakeHcloud({ rateLimit: { limit: BUDGET_PER_HOUR, refillPerSecond: SCALE } });
const kc = new KubeConfig();
kc.loadFromFile(controlPlane.kubeconfigPath);
const kube = new KubeClient(kc, { rateLimit: false });
const nodes = kube.resource<Node>(NODE_RESOURCE);

async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
    }),
  );
}
/**
 * The bench's own writes (the kubelet's part) retried while the API server is overloaded, as on a busy
 * machine it may be: they are the scenario, not what is measured.
 */
async function retryingOverload<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const overloaded = [isTimeout, isServerTimeout, isTooManyRequests, isServiceUnavailable].some((is) =>
        is(error),
      );
      if (!overloaded || attempt === 5) throw error;
      await sleep(1000);
    }
  }
}
const setReady = (name: string, status: 'True' | 'False'): Promise<unknown> =>
  retryingOverload(() => reportReady(kube, name, status, { reason: 'Bench' }));
async function addServerAndNode(): Promise<FakeHcloudServer> {
  const server = fake.servers.add();
  await retryingOverload(() =>
    nodes
      .create({ metadata: { name: server.name }, spec: { providerID: `hcloud://${server.id}` } })
      .catch((error: unknown) => {
        // An attempt that timed out may have created it: the names are new (one per server).
        if (!isAlreadyExists(error)) throw error;
      }),
  );
  await setReady(server.name, 'True');
  return server;
}
const nodeExists = async (name: string): Promise<boolean> =>
  (await nodes.getOptional({ name })) !== undefined;

/** A sweep's request for `page` (not a name query). */
const isSweepPage = (r: { endpoint: string; query: URLSearchParams }, page: number): boolean =>
  r.endpoint === '/v1/servers' && r.query.get('page') === String(page) && !r.query.has('name');

/** Waits until a sweep lists `page`, so that a server on it is not seen again before the next sweep. */
async function sweptPage(page: number, deadline: number): Promise<void> {
  let seen = fake.requests.entries.length;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`no sweep listed page ${page} before the phase ended`);
    const entries = fake.requests.entries;
    for (; seen < entries.length; seen++) {
      const entry = entries[seen];
      if (entry && isSweepPage(entry, page)) return;
    }
    await sleep(1);
  }
}

interface Run {
  steadyPerHour: number;
  steadyThrottled: number;
  notReadyPerHour: number;
  notReadyThrottled: number;
  sweepsPerMinute: number;
  singleLookups: number;
  removedAfterS: number | undefined;
  bucketLeft: string;
}

const scaledHours = (realMs: number): number => (realMs * SCALE) / 3_600_000;

try {
  log(`creating ${NODES} servers and Nodes...`);
  const servers: FakeHcloudServer[] = [];
  await pool(
    Array.from({ length: NODES }, (_, i) => i),
    16,
    async () => servers.push(await addServerAndNode()),
  );
  fake.faults.latency(LATENCY_MS);

  const hcloud = new HcloudClient({ token: fake.token, endpoint: fake.url });
  const directory = new ServerDirectory({
    client: hcloud,
    budget: new RequestBudget({ rateLimit: () => hcloud.rateLimit }),
  });
  const manager = new Manager({
    kubeConfig: kc,
    logger: createSilentLogger(),
    metrics: createMetrics({ defaultMetrics: false }),
    health: false,
    rateLimit: false,
  });
  for (const c of createCloudNodeControllers({
    api: createNodeApi({
      client: manager.client,
      recorder: manager.eventRecorder('loopwright.dev/cloud-node'),
      directory,
    }),
    addressFamily: 'ipv4',
    networkId: undefined,
    zoneLabels: true,
    nodeMonitorPeriodMs: 5000 / SCALE,
    notReadySweepPeriodMs: NOT_READY_SWEEP_PERIOD_MS / SCALE,
    nodeStatusUpdateFrequencyMs: 300_000 / SCALE,
  }))
    manager.add(c);
  const abort = new AbortController();
  const running = manager.start(abort.signal);

  const runs: Run[] = [];
  for (let run = 1; run <= RUNS; run++) {
    // Warm-up: the first sweep and address writes, or the previous run's Nodes turning Ready.
    await sleep(5000);
    log(`run ${run}/${RUNS}: steady state for ${STEADY_S} s real (${(STEADY_S * SCALE) / 60} min scaled)...`);
    let since = Date.now();
    await sleep(STEADY_S * 1000);
    const steadyRequests = fake.requests.count({ since });
    const steadyThrottled = fake.requests.count({ since, status: 429 });

    log(`run ${run}/${RUNS}: all Nodes NotReady for ${NOTREADY_S} s real; bucket drained to 1000 first...`);
    since = Date.now();
    await pool(servers, 16, (s) => setReady(s.name, 'False'));
    fake.rateLimit.set(1000);
    const phaseEnd = since + NOTREADY_S * 1000;
    await sleep(10_000);
    const victim = servers[Math.floor(servers.length / 2)];
    if (!victim) throw new Error('no servers');
    const victimPage = Math.floor(fake.servers.list().findIndex((s) => s.id === victim.id) / 50) + 1;
    await sweptPage(victimPage, phaseEnd);
    fake.servers.delete(victim.id);
    const deletedAt = Date.now();
    let removedAfterMs: number | undefined;
    while (Date.now() < phaseEnd) {
      if (removedAfterMs === undefined && !(await nodeExists(victim.name)))
        removedAfterMs = Date.now() - deletedAt;
      await sleep(20);
    }
    const phaseMs = Date.now() - since;
    const sweeps = fake.requests.filter({ since }).filter((r) => isSweepPage(r, 1)).length;
    runs.push({
      steadyPerHour: steadyRequests / scaledHours(STEADY_S * 1000),
      steadyThrottled,
      notReadyPerHour: fake.requests.count({ since }) / scaledHours(phaseMs),
      notReadyThrottled: fake.requests.count({ since, status: 429 }),
      sweepsPerMinute: sweeps / ((phaseMs * SCALE) / 60_000),
      singleLookups: fake.requests.count({ since, endpoint: '/v1/servers/{id}' }),
      removedAfterS: removedAfterMs === undefined ? undefined : (removedAfterMs * SCALE) / 1000,
      bucketLeft: fake.rateLimit.headers()['RateLimit-Remaining'] ?? '?',
    });

    // Back to NODES Ready Nodes: the others Ready again, the deleted server and its Node replaced.
    servers.splice(servers.indexOf(victim), 1);
    await pool(servers, 16, (s) => setReady(s.name, 'True'));
    servers.push(await addServerAndNode());
  }
  abort.abort();
  await running;

  const hccmSteady = NODES * 12; // 1 request per Node per 5 min
  const hccmNotReady = NODES * 2 * 720 + NODES * 12; // 2 per NotReady Node per 5 s, plus the 5 min refresh
  const spread = (values: readonly number[], digits = 0): string => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted.length / 2;
    const median = Number.isInteger(middle)
      ? ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2
      : (sorted[Math.floor(middle)] ?? NaN);
    return [sorted[0] ?? NaN, median, sorted.at(-1) ?? NaN].map((v) => v.toFixed(digits)).join(' / ');
  };
  const of = <K extends keyof Run>(key: K): Run[K][] => runs.map((r) => r[key]);
  const removed = runs.map((r) => r.removedAfterS ?? Number.POSITIVE_INFINITY);
  const rows = [
    ['figure (min / median / max over the runs)', 'value', 'baseline in the same run', 'bound'],
    [
      'steady, 500 Ready: req/h',
      spread(of('steadyPerHour')),
      `HCCM ${hccmSteady}: x${spread(
        of('steadyPerHour').map((v) => v / hccmSteady),
        3,
      )}`,
      '',
    ],
    [
      'all 500 NotReady: req/h',
      spread(of('notReadyPerHour')),
      `HCCM ${hccmNotReady}: x${spread(
        of('notReadyPerHour').map((v) => v / hccmNotReady),
        4,
      )}; steady: x${spread(
        runs.map((r) => r.notReadyPerHour / r.steadyPerHour),
        1,
      )}`,
      '<= 900 (25 % of 3600)',
    ],
    [
      'all 500 NotReady: % of the budget',
      spread(
        of('notReadyPerHour').map((v) => (100 * v) / BUDGET_PER_HOUR),
        1,
      ),
      `HCCM: ${Math.round((100 * hccmNotReady) / BUDGET_PER_HOUR)} %`,
      '<= 25',
    ],
    [
      'all 500 NotReady: sweeps/min',
      spread(of('sweepsPerMinute'), 2),
      'HCCM: no sweeps, 12,000 GETs/min',
      '',
    ],
    ['all 500 NotReady: GET /servers/{id}', spread(of('singleLookups')), '', ''],
    ["deleted server's Node removed after (s)", spread(removed, 1), 'HCCM: within 5 s', '<= 60'],
    [
      '429s (steady, NotReady)',
      `${spread(of('steadyThrottled'))}, ${spread(of('notReadyThrottled'))}`,
      '',
      '0',
    ],
    ['bucket left at the end of NotReady', of('bucketLeft').join(', '), 'of 3600, from 1000', ''],
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  console.log(
    `\ncloud-node bench: ${NODES} Nodes, ${RUNS} runs, time x${SCALE} (monitor ${5000 / SCALE} ms, NotReady sweep period ${NOT_READY_SWEEP_PERIOD_MS / SCALE} ms, refresh ${300 / SCALE} s, bucket 3600 refilled ${SCALE}/s, API latency ${LATENCY_MS} ms); phases ${STEADY_S} s + ${NOTREADY_S} s real`,
  );
  console.log(
    `command: SCALE=${SCALE} STEADY_S=${STEADY_S} NOTREADY_S=${NOTREADY_S} NODES=${NODES} RUNS=${RUNS} LATENCY_MS=${LATENCY_MS} pnpm bench`,
  );
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | '));
} finally {
  await kube.close();
  await fake.close();
  await controlPlane.stop();
}
