/**
 * The faults, each injected into the running world and undone: what it does, how long the controllers
 * took to notice (measured on what they export: metrics on each replica's pod IP, the Lease, the pods'
 * status), and what their metrics and logs must then say. `inject` resolves once the fault is undone;
 * the suite then holds the controllers to the invariants and times their recovery from that moment.
 */
import type { KubeObject } from '@loopwright/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { podLog } from '../src/node.ts';
import { resource } from '../src/kube.ts';
import { CONFIG_MAPS } from '../src/resources.ts';
import { UNCACHED_RESOURCE, type ChaosEnvironment, type Controller } from './environment.ts';
import type { Load } from './load.ts';
import { leaderAndStandby, leaseOf, replicasOf, scrape, type Metrics, type Replica } from './replicas.ts';

export interface FaultOutcome {
  /** From the injection to the first sign of it in what the controllers export; undefined: nothing to notice. */
  detectedAfterMs: number | undefined;
  /** What that sign was. */
  detection: string;
  /** When the fault was undone (performance.now()): recovery is timed from here. */
  undoneAt: number;
  /** Asserts, once the invariants hold, that the controllers' logs and metrics name what happened. */
  evidence(): Promise<string[]>;
}

export interface Fault {
  /** The issue's number of the fault. */
  id: number;
  name: string;
  inject(env: ChaosEnvironment, load: Load): Promise<FaultOutcome>;
}

/** The charts' leader election defaults (`--leader-elect-lease-duration`, `-renew-deadline`). */
const LEASE_DURATION_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
const SILENT_WATCH_MS = 120_000;
/** How long a lowered memory limit may wait for the kill before it is lowered again. */
const LOWER_AGAIN_MS = 20_000;
/** While waiting for the kill, 2 Ats this often: work for the leader to allocate for. */
const AT_EVERY_MS = 2000;

const controller = (env: ChaosEnvironment, name: Controller['name']): Controller => {
  const found = env.controllers.find((c) => c.name === name);
  if (!found) throw new Error(`no ${name} installed`);
  return found;
};

/** Polls `condition` until true; resolves to the time from `since` (performance.now()) to then. */
async function timeUntil(
  since: number,
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const deadline = since + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return performance.now() - since;
    if (performance.now() > deadline) throw new Error(`not seen within ${timeoutMs / 1000} s: ${what}`);
    await sleep(250);
  }
}

/** Each replica's metric (by pod name) now; a replica that does not answer counts as absent. */
async function metricOf(
  replicas: readonly Replica[],
  value: (metrics: Metrics) => number,
): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  for (const replica of replicas) {
    const metrics = await scrape(replica);
    if (metrics) values.set(replica.name, value(metrics));
  }
  return values;
}

/** Every one of `replicas` shows `value` above what `before` recorded for it. */
async function allIncreased(
  replicas: readonly Replica[],
  before: Map<string, number>,
  value: (metrics: Metrics) => number,
): Promise<boolean> {
  const now = await metricOf(replicas, value);
  return replicas.every((r) => (now.get(r.name) ?? 0) > (before.get(r.name) ?? 0));
}

interface LogRecord {
  timestamp?: string;
  message?: string;
  reason?: string;
  resource?: string;
  [field: string]: unknown;
}

/**
 * The JSON log records a pod wrote since `since` (epoch ms), its previous container's included when
 * `previous` (a container that was killed or exited).
 */
async function logSince(
  env: ChaosEnvironment,
  namespace: string,
  pod: string,
  since: number,
  previous = false,
): Promise<LogRecord[]> {
  const texts = [await podLog(env.admin, namespace, pod)];
  if (previous) texts.push(await podLog(env.admin, namespace, pod, { previous: true }));
  return texts
    .flatMap((text) => text.split('\n'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line.slice(line.indexOf('{'))) as LogRecord];
      } catch {
        return [];
      }
    })
    .filter((record) => Date.parse(record.timestamp ?? '') >= since);
}

/** Throws unless `records` hold one that `matches`; returns a line naming it. */
function logged(pod: string, records: LogRecord[], matches: (r: LogRecord) => boolean, what: string): string {
  const found = records.find(matches);
  if (!found) throw new Error(`${pod} logged no ${what} (${records.length} records since the fault)`);
  return `${pod}: "${found.message ?? ''}"${found.reason ? ` reason=${found.reason}` : ''}`;
}

/** Each replica's restarts and watch errors by resource and reason, for a failure message. */
async function describeWatchErrors(env: ChaosEnvironment, replicas: readonly Replica[]): Promise<string> {
  const lines: string[] = [];
  for (const controller of env.controllers)
    for (const now of await replicasOf(env.admin, controller)) {
      if (!replicas.some((r) => r.name === now.name)) continue;
      const metrics = await scrape(now);
      const errors = metrics?.samples('loopwright_informer_watch_errors_total').join(', ') ?? 'no /metrics';
      lines.push(`${now.name} (restarts ${now.restarts}, ready ${now.ready}): ${errors}`);
    }
  return lines.join('; ');
}

const watchErrors = (m: Metrics) => m.sum('loopwright_informer_watch_errors_total');
const relistsOf = (resourceName: string) => (m: Metrics) =>
  m.sum('loopwright_informer_relists_total', { resource: resourceName });

/**
 * (3) etcd compacted past the resourceVersion the Ats watches resume from. The API server runs without a
 * watch cache for Ats (environment.ts), so their watches read etcd, as every watch does behind an API
 * server without one; the connections of every controller replica are then reset, so each watch
 * resumes from its last resourceVersion: etcd answers 410 Gone for the Ats, and their informers must
 * relist, with no event lost or doubled.
 */
const etcdCompaction: Fault = {
  id: 3,
  name: 'etcd compaction past a watch resourceVersion (410 Gone)',
  async inject(env) {
    const atScheduler = controller(env, 'at-scheduler');
    const replicas = await replicasOf(env.admin, atScheduler);
    const relists = relistsOf(UNCACHED_RESOURCE);
    const before = await metricOf(replicas, relists);
    // etcd starts a watch at its resourceVersion + 1: the compaction must be at least two revisions
    // past it. Two writes of the suite's own move the revision that far, whatever else is quiet.
    const bump = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: env.work.name, name: 'chaos-revision' },
    };
    const configMaps = resource<KubeObject & { data: Record<string, string> }>(env.admin, CONFIG_MAPS);
    await configMaps.create({ ...bump, data: { n: '1' } });
    await configMaps.patch(bump.metadata, { merge: { data: { n: '2' } } });
    const injected = performance.now();
    const since = Date.now();
    const revision = await env.cluster.compactEtcd();
    let reset = 0;
    for (const each of env.controllers)
      for (const replica of await replicasOf(env.admin, each))
        reset += await env.cluster.resetApiServerConnections(replica.ip);
    const detectedAfterMs = await timeUntil(
      injected,
      () => allIncreased(replicas, before, relists),
      60_000,
      `a relist of ${UNCACHED_RESOURCE} on every at-scheduler replica`,
    );
    return {
      detectedAfterMs,
      detection: `relists_total{resource=${UNCACHED_RESOURCE}} +1 on both at-scheduler replicas (compacted at revision ${revision}, ${reset} connections reset)`,
      undoneAt: performance.now(),
      evidence: async () =>
        Promise.all(
          replicas.map(async (replica) =>
            logged(
              replica.name,
              await logSince(env, atScheduler.namespace, replica.name, since),
              (r) => r.message === 'watch expired; relisting' && r.resource === UNCACHED_RESOURCE,
              `'watch expired; relisting' for ${UNCACHED_RESOURCE}`,
            ),
          ),
        ),
    };
  },
};

/**
 * (1) kube-apiserver SIGKILLed right after a burst of work (Ats due in 3 s, Clusters, Nodes), and started
 * again; every connection and watch breaks, and the restarted server's watch cache starts over.
 */
const apiServerKilled: Fault = {
  id: 1,
  name: 'kube-apiserver SIGKILLed mid-burst and restarted',
  async inject(env, load) {
    const replicas = (await Promise.all(env.controllers.map((c) => replicasOf(env.admin, c)))).flat();
    const before = await metricOf(replicas, watchErrors);
    await Promise.all([load.createAts(20), load.createClusters(3), load.addMachines(2)]);
    const injected = performance.now();
    const since = Date.now();
    // Watched from here, through the outage: the replicas' /metrics answer on their pod IPs.
    const detected = timeUntil(
      injected,
      async () => {
        const now = await metricOf(replicas, watchErrors);
        return replicas.some((r) => (now.get(r.name) ?? 0) > (before.get(r.name) ?? 0));
      },
      120_000,
      'a watch error on any replica',
    );
    await env.cluster.restartApiServer('SIGKILL');
    const undoneAt = performance.now();
    return {
      detectedAfterMs: await detected,
      detection: `watch_errors_total +1 on a replica (API server back after ${((undoneAt - injected) / 1000).toFixed(1)} s)`,
      undoneAt,
      evidence: async () => {
        const lines: string[] = [];
        for (const each of env.controllers) {
          const { leader } = await leaderAndStandby(env.admin, each);
          const records = await logSince(env, each.namespace, leader.name, since, leader.restarts > 0);
          lines.push(
            logged(
              leader.name,
              records,
              (r) => /^watch (failed|expired)/.test(r.message ?? '') || /^list failed/.test(r.message ?? ''),
              'failed or expired watch',
            ),
          );
        }
        return lines;
      },
    };
  },
};

/**
 * (6) Each controller's leader cut off from the API server (its packets dropped both ways) while its
 * pod runs on: it must stop before its Lease can expire, i.e. before a standby may take over, and the
 * standby must take over. The leader exits on a lost renewal (its container's end is when it stopped:
 * nothing of it writes afterwards); the black hole is lifted once every standby leads.
 */
const leaderPartitioned: Fault = {
  id: 6,
  name: 'leader partitioned from the API server, its pod running',
  async inject(env) {
    const sides = await Promise.all(
      env.controllers.map(async (c) => ({ controller: c, ...(await leaderAndStandby(env.admin, c)) })),
    );
    const injected = performance.now();
    const since = Date.now();
    const restores = await Promise.all(sides.map(({ leader }) => env.cluster.blackHoleApiServer(leader.ip)));
    const outcomes = await Promise.all(
      sides.map(async ({ controller: c, leader, standby }) => {
        // The old leader's last renewal, as the Lease records it, until another holder replaces it.
        let lastRenewal = 0;
        let acquiredAt = 0;
        await timeUntil(
          injected,
          async () => {
            const lease = await leaseOf(env.admin, c);
            if (lease.holder === leader.name) lastRenewal = lease.renewTime;
            else if (lease.holder === standby.name) acquiredAt = lease.acquireTime;
            return acquiredAt > 0;
          },
          60_000,
          `${c.name}: ${standby.name} takes the Lease over`,
        );
        let stoppedAt = 0;
        await timeUntil(
          injected,
          async () => {
            const now = (await replicasOf(env.admin, c)).find((r) => r.name === leader.name);
            if (!now?.lastTermination || now.restarts <= leader.restarts) return false;
            stoppedAt = Date.parse(now.lastTermination.finishedAt);
            return true;
          },
          60_000,
          `${c.name}: the partitioned leader ${leader.name} exits`,
        );
        // finishedAt has whole seconds: a second of slack on the one side it can round to.
        if (stoppedAt - 1000 > lastRenewal + LEASE_DURATION_MS)
          throw new Error(
            `${c.name}: ${leader.name} ran until ${new Date(stoppedAt).toISOString()}, past its Lease's expiry (${new Date(lastRenewal + LEASE_DURATION_MS).toISOString()})`,
          );
        if (stoppedAt - 1000 > acquiredAt)
          throw new Error(`${c.name}: ${leader.name} was still running when ${standby.name} took over`);
        return { c, leader, standby, lastRenewal, stoppedAt, acquiredAt };
      }),
    );
    for (const restore of restores) await restore();
    const undoneAt = performance.now();
    const stoppedAfter = Math.max(...outcomes.map((o) => o.stoppedAt - since));
    return {
      detectedAfterMs: stoppedAfter,
      detection: outcomes
        .map(
          (o) =>
            `${o.c.name}: stopped ${((o.stoppedAt - o.lastRenewal) / 1000).toFixed(0)} s after its last renewal (renew deadline ${RENEW_DEADLINE_MS / 1000} s, Lease ${LEASE_DURATION_MS / 1000} s), standby led ${((o.acquiredAt - o.lastRenewal) / 1000).toFixed(1)} s after it`,
        )
        .join('; '),
      undoneAt,
      evidence: async () => {
        const lines: string[] = [];
        for (const { c, leader, standby } of outcomes) {
          lines.push(
            logged(
              leader.name,
              await logSince(env, c.namespace, leader.name, since, true),
              (r) => /^leadership lost/.test(r.message ?? ''),
              "'leadership lost' (previous container)",
            ),
            logged(
              standby.name,
              await logSince(env, c.namespace, standby.name, since),
              (r) => r.message === 'started leading',
              "'started leading'",
            ),
          );
        }
        return lines;
      },
    };
  },
};

/**
 * (2) A silent watch: each controller's standby (warm: its informers watch) has its traffic to the API
 * server dropped for 2 minutes, without a reset; its watches must notice (TCP keepalive finds the dead
 * connection 30 to 40 s after its last packet, before the watch's 90 s inactivity timeout) and,
 * once the traffic flows, resume so that its caches equal a fresh LIST again.
 */
const silentWatch: Fault = {
  id: 2,
  name: 'silent watch: a standby black-holed from the API server for 2 min',
  async inject(env) {
    const sides = await Promise.all(
      env.controllers.map(async (c) => ({ controller: c, ...(await leaderAndStandby(env.admin, c)) })),
    );
    const standbys = sides.map((side) => side.standby);
    const before = await metricOf(standbys, watchErrors);
    const injected = performance.now();
    const since = Date.now();
    const restores = await Promise.all(standbys.map((standby) => env.cluster.blackHoleApiServer(standby.ip)));
    let detectedAfterMs: number;
    try {
      detectedAfterMs = await timeUntil(
        injected,
        () => allIncreased(standbys, before, watchErrors),
        SILENT_WATCH_MS,
        'a watch error on every black-holed standby',
      ).catch(async (error: unknown) => {
        const failures = await Promise.all(
          sides.map(async ({ controller: c, standby }) =>
            (await logSince(env, c.namespace, standby.name, since))
              .filter((r) => /failed|expired/.test(r.message ?? ''))
              .map(
                (r) =>
                  `${standby.name} ${r.timestamp ?? ''} ${r.message ?? ''} ${r.reason ?? ''} ${String(r.error)}`,
              ),
          ),
        );
        throw new Error(
          `${String(error)}; the standbys: ${await describeWatchErrors(env, standbys)}; their logs: ${failures.flat().join('; ')}`,
        );
      });
      await sleep(Math.max(0, injected + SILENT_WATCH_MS - performance.now()));
    } finally {
      for (const restore of restores) await restore();
    }
    return {
      detectedAfterMs,
      detection: 'loopwright_informer_watch_errors_total +1 on every black-holed standby',
      undoneAt: performance.now(),
      evidence: async () =>
        Promise.all(
          sides.map(async ({ controller: c, standby }) =>
            logged(
              standby.name,
              await logSince(env, c.namespace, standby.name, since),
              (r) => /^watch failed/.test(r.message ?? ''),
              "'watch failed' (its reason: inactivity after 90 s of silence, network if the connection broke)",
            ),
          ),
        ),
    };
  },
};

/** (4) The kubelet restarted while Ats become due: their pods must still run once each. */
const kubeletRestarted: Fault = {
  id: 4,
  name: 'kubelet restarted',
  async inject(env, load) {
    const replicas = (await Promise.all(env.controllers.map((c) => replicasOf(env.admin, c)))).flat();
    await load.createAts(10);
    const injected = performance.now();
    await env.cluster.restartKubelet();
    const undoneAt = performance.now();
    return {
      detectedAfterMs: undefined,
      detection: `nothing for the controllers to notice; the kubelet was healthy again after ${((undoneAt - injected) / 1000).toFixed(1)} s`,
      undoneAt,
      evidence: async () => {
        const now = (await Promise.all(env.controllers.map((c) => replicasOf(env.admin, c)))).flat();
        const restarted = now.filter(
          (r) => r.restarts > (replicas.find((b) => b.name === r.name)?.restarts ?? 0),
        );
        if (restarted.length > 0)
          throw new Error(
            `a kubelet restart restarted controller containers: ${restarted.map((r) => r.name).join(', ')}`,
          );
        return ['no controller container restarted'];
      },
    };
  },
};

/**
 * (5) at-scheduler's leader OOM-killed: its container's memory limit lowered to its usage plus 1 MiB
 * while Ats keep coming, until the kernel kills it; the kubelet starts it again with the
 * pod's own limit, and a replica leads.
 */
const oomKilled: Fault = {
  id: 5,
  name: 'controller container OOM-killed by its memory limit, restarted by the kubelet',
  async inject(env, load) {
    const atScheduler = controller(env, 'at-scheduler');
    const { leader } = await leaderAndStandby(env.admin, atScheduler);
    const injected = performance.now();
    const since = Date.now();
    let ended: Replica['lastTermination'];
    let killedAt = 0;
    let lowered = 0;
    let lastAts = 0;
    await timeUntil(
      injected,
      async () => {
        const now = (await replicasOf(env.admin, atScheduler)).find((r) => r.name === leader.name);
        if (now && now.restarts > leader.restarts && now.lastTermination) {
          ended = now.lastTermination;
          killedAt = Date.parse(now.lastTermination.finishedAt);
          return true;
        }
        // Lowered once, and again only if the process shrank meanwhile (set again and again, the limit
        // would follow its usage up); the load's Ats make it allocate.
        if (performance.now() - lowered > LOWER_AGAIN_MS) {
          lowered = performance.now();
          await env.cluster.lowerMemoryLimit(leader.containerId, 2 ** 20).catch(() => undefined);
        }
        if (performance.now() - lastAts > AT_EVERY_MS) {
          lastAts = performance.now();
          await load.createAts(2);
        }
        return false;
      },
      120_000,
      `${leader.name} OOM-killed`,
    );
    if (ended?.reason !== 'OOMKilled')
      throw new Error(`${leader.name} ended ${JSON.stringify(ended)}, not OOMKilled`);
    // Restarted by the kubelet, with the pod's own limit, and Ready again.
    await timeUntil(
      injected,
      async () =>
        (await replicasOf(env.admin, atScheduler)).find((r) => r.name === leader.name)?.ready ?? false,
      120_000,
      `${leader.name} Ready again`,
    );
    return {
      detectedAfterMs: killedAt - since,
      detection: `${leader.name} OOMKilled (lastState.terminated.reason), restarted by the kubelet`,
      undoneAt: performance.now(),
      evidence: async () => {
        const { leader: now } = await leaderAndStandby(env.admin, atScheduler);
        return [`Lease held by ${now.name} after the kill`];
      },
    };
  },
};

/** In the order the suite injects them: the short ones first, the one that waits 2 min late. */
export const faults: readonly Fault[] = [
  etcdCompaction,
  apiServerKilled,
  leaderPartitioned,
  silentWatch,
  kubeletRestarted,
  oomKilled,
];
