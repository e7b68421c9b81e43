/**
 * Hetzner API cost of the cloud-node controllers with 500 Nodes, against the fake API, with time scaled
 * up by SCALE (default 10): the 5 min address refresh runs every 300/SCALE s, the 5 s monitor period
 * every 5/SCALE s, and the fake's bucket refills SCALE requests per second (the real 1/s, scaled).
 * Requests per hour are reported in scaled (i.e. real-world) hours.
 *
 *   pnpm bench                      # SCALE=10 STEADY_S=60 NOTREADY_S=60 NODES=500
 *
 * Phases: (1) steady state, every Node Ready; (2) every Node NotReady, starting with the bucket at
 * 1000 of 3600 (other API users took the rest), and one server deleted 10 s (real) into the phase: how
 * long until its Node is gone, and how many 429s. HCCM's numbers are computed from its documented
 * behaviour (uncached: 2 requests per NotReady Node per 5 s, 1 per Node per 5 min).
 */
import { HcloudClient } from '@loopwright/hcloud';
import { createMetrics } from '@loopwright/metrics';
import { KubeClient, Manager, createSilentLogger } from '@loopwright/runtime';
import { startControlPlane, startFakeHcloud } from '@loopwright/testing';
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
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const controlPlane = await startControlPlane();
const fake = await startFakeHcloud({ rateLimit: { limit: 3600, refillPerSecond: SCALE } });
const kc = new KubeConfig();
kc.loadFromFile(controlPlane.kubeconfigPath);
const kube = new KubeClient(kc, { rateLimit: false });

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
const setReady = (name: string, status: string): Promise<unknown> =>
  kube.requestJson('PATCH', `/api/v1/nodes/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        conditions: [
          {
            type: 'Ready',
            status,
            reason: 'Bench',
            lastHeartbeatTime: new Date().toISOString(),
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    },
  });

try {
  log(`creating ${NODES} servers and Nodes...`);
  const servers = Array.from({ length: NODES }, () => fake.servers.add());
  await pool(servers, 16, async (s) => {
    await kube.requestJson('POST', '/api/v1/nodes', {
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: s.name },
        spec: { providerID: `hcloud://${s.id}` },
      },
    });
    await setReady(s.name, 'True');
  });

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
    nodeStatusUpdateFrequencyMs: 300_000 / SCALE,
  }))
    manager.add(c);
  const abort = new AbortController();
  const running = manager.start(abort.signal);

  // Warm-up: the first sweep and the first address writes.
  await sleep(5000);
  const scaledHours = (realSeconds: number): number => (realSeconds * SCALE) / 3600;

  log(`steady state for ${STEADY_S} s real (${(STEADY_S * SCALE) / 60} min scaled)...`);
  let since = Date.now();
  await sleep(STEADY_S * 1000);
  const steady = {
    requests: fake.requests.count({ since }),
    throttled: fake.requests.count({ since, status: 429 }),
  };

  log(`all Nodes NotReady for ${NOTREADY_S} s real; bucket drained to 1000 first...`);
  await pool(servers, 16, (s) => setReady(s.name, 'False'));
  fake.rateLimit.set(1000);
  since = Date.now();
  const victim = servers[Math.floor(NODES / 2)];
  if (!victim) throw new Error('no servers');
  let deletedAfterMs: number | undefined;
  const phaseEnd = since + NOTREADY_S * 1000;
  await sleep(10_000);
  fake.servers.delete(victim.id);
  const deletedAt = Date.now();
  while (Date.now() < phaseEnd) {
    if (deletedAfterMs === undefined) {
      const gone = await kube.fetch(`/api/v1/nodes/${victim.name}`).then((r) => r.status === 404);
      if (gone) deletedAfterMs = Date.now() - deletedAt;
    }
    await sleep(100);
  }
  const notReady = {
    requests: fake.requests.count({ since }),
    throttled: fake.requests.count({ since, status: 429 }),
  };
  const remainingAtEnd = fake.rateLimit.headers()['RateLimit-Remaining'];
  abort.abort();
  await running;

  const perHour = (n: number, seconds: number): number => Math.round(n / scaledHours(seconds));
  const hccmSteady = NODES * 12; // 1 request per Node per 5 min
  const hccmNotReady = NODES * 2 * 720 + NODES * 12; // 2 per NotReady Node per 5 s, plus the 5 min refresh
  const rows = [
    ['phase', 'loopwright req/h', 'HCCM req/h (documented)', '429s', 'notes'],
    [
      'steady, 500 Ready',
      String(perHour(steady.requests, STEADY_S)),
      String(hccmSteady),
      String(steady.throttled),
      'target <= 130/h',
    ],
    [
      'all 500 NotReady',
      String(perHour(notReady.requests, NOTREADY_S)),
      String(hccmNotReady),
      String(notReady.throttled),
      `deleted server's Node removed after ${deletedAfterMs === undefined ? 'NOT within the phase' : `${Math.round((deletedAfterMs * SCALE) / 1000)} s scaled (${deletedAfterMs} ms real)`}; bucket left ${remainingAtEnd ?? '?'}/3600`,
    ],
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  console.log(
    `\ncloud-node bench: ${NODES} Nodes, time x${SCALE} (monitor ${5000 / SCALE} ms, refresh ${300 / SCALE} s, bucket 3600 refilled ${SCALE}/s)`,
  );
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | '));
  console.log(
    `HCCM's budget: 3600 req/h; its NotReady storm is ${Math.round(hccmNotReady / 3600)}x that (429s from the first minute).`,
  );
} finally {
  await kube.close();
  await fake.close();
  await controlPlane.stop();
}
