/**
 * The e2e suites' view of the real node: namespaces under the restricted Pod Security profile, the
 * chart's pods and their logs, the Lease holder, and a real Prometheus discovering the controller pods
 * through the Kubernetes API (the chart's metrics Service, as a ServiceMonitor selects it).
 */
import {
  TIMESTAMPED_LOG_QUERY,
  TimestampedLogReader,
  loadTestNode,
  readTimestampedLog,
  type PodLogReadError,
} from '@loopwright/cluster';
import { createTestNamespace, eventually, type TestNamespace } from '@loopwright/envtest';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlreadyExists, KubeApiError, type KubeObject } from '@loopwright/client';
import { readPodLog, resource, streamPodLog, type PodLogQuery } from './kube.ts';
import { LEASES, NAMESPACES, PODS } from './resources.ts';
import { startPrometheus, type Prometheus } from './prometheus.ts';

/** A fresh namespace that enforces the restricted profile, as a hardened cluster's would. */
export async function restrictedNamespace(admin: KubeConfig, prefix: string): Promise<TestNamespace> {
  const namespace = await createTestNamespace(admin, prefix);
  await resource(admin, NAMESPACES).patch(
    { name: namespace.name },
    { merge: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } },
  );
  return namespace;
}

/**
 * The README's release namespace (`loopwright`), made to enforce the restricted profile before the
 * install, as a hardened cluster's would: created with the label, or labelled if an earlier suite (or
 * `--create-namespace`) made it. It stays: the suites on the node run one after the other in it, and
 * a namespace being deleted would still be Terminating when the next one installs.
 */
export async function enforceRestricted(admin: KubeConfig, namespace: string): Promise<void> {
  const labels = { 'pod-security.kubernetes.io/enforce': 'restricted' };
  const namespaces = resource(admin, NAMESPACES);
  try {
    await namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    await namespaces.patch({ name: namespace }, { merge: { metadata: { labels } } });
  }
}

/**
 * Whether a pod of `template` would be admitted by a namespace that enforces the restricted profile:
 * a server-side dry run of it in `restrictedNamespace` (Pod Security admission judges dry runs as real
 * creates; nothing is stored). The pod runs as that namespace's `default` ServiceAccount, which the
 * profile does not look at, since the release's ServiceAccount lives elsewhere.
 */
export async function assertAdmittedUnderRestricted(
  admin: KubeConfig,
  restrictedNamespace: string,
  template: { metadata?: { labels?: Record<string, string> }; spec: Record<string, unknown> },
): Promise<void> {
  await resource<KubeObject & { spec: Record<string, unknown> }>(admin, PODS)
    .create(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          namespace: restrictedNamespace,
          generateName: 'restricted-dry-run-',
          labels: template.metadata?.labels,
        },
        spec: { ...template.spec, serviceAccountName: 'default' },
      },
      { dryRun: true },
    )
    .catch((error: unknown) => {
      throw new Error('the pod template violates the restricted profile', { cause: error });
    });
}

export interface PodSummary {
  name: string;
  phase: string;
  ready: boolean;
  ip: string | undefined;
  restarts: number;
  deleting: boolean;
}

interface Pod extends KubeObject {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status: {
    phase: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      name: string;
      restartCount: number;
      state?: { terminated?: { reason?: string } };
    }[];
  };
}

/** The pods matching `selector` (a label selector), as a `kubectl get pods` line each. */
export async function pods(admin: KubeConfig, namespace: string, selector: string): Promise<PodSummary[]> {
  const list = await resource<Pod>(admin, PODS).list({ namespace, labelSelector: selector });
  return list.items.map((pod) => ({
    name: pod.metadata.name,
    phase: pod.status.phase,
    ready: pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    ip: pod.status.podIP,
    restarts: pod.status.containerStatuses?.reduce((sum, c) => sum + c.restartCount, 0) ?? 0,
    deleting: pod.metadata.deletionTimestamp !== undefined,
  }));
}

/**
 * A container's log through the API server (which asks the kubelet), as `kubectl logs` reads it; throws
 * {@link PodLogReadError} when the kubelet's answer is not the log (see `readTimestampedLog`).
 */
export async function podLog(
  admin: KubeConfig,
  namespace: string,
  pod: string,
  options: { container?: string; previous?: boolean } = {},
): Promise<string> {
  const query: PodLogQuery = { ...TIMESTAMPED_LOG_QUERY };
  if (options.container) query.container = options.container;
  if (options.previous) query.previous = true;
  const body = await readPodLog(admin, { namespace, name: pod }, query);
  return readTimestampedLog(`log of pod ${namespace}/${pod}`, body);
}

export interface PodUidWatch {
  /** Every uid a pod of this name has had since the watch started: more than one means it was re-created. */
  uidsOf(name: string): string[];
  /** Every termination reason the pod's `container` has been reported with, first seen first. */
  terminationReasonsOf(name: string, container: string): string[];
  stop(): void;
}

/**
 * Watches the pods matching `selector` from now on and remembers each uid under its pod name, so a
 * pod that was created and deleted between two looks still counts. A watch that breaks before `stop`
 * makes `uidsOf` throw: a silent gap would let a second pod go unnoticed.
 */
export async function watchPodUids(
  admin: KubeConfig,
  namespace: string,
  selector: string,
): Promise<PodUidWatch> {
  const podResource = resource<Pod>(admin, PODS);
  const list = await podResource.list({ namespace, labelSelector: selector });
  const uids = new Map<string, Set<string>>();
  /** By `<pod>/<container>`. */
  const reasons = new Map<string, Set<string>>();
  const remember = (pod: Pod) => {
    const seen = uids.get(pod.metadata.name) ?? new Set<string>();
    seen.add(pod.metadata.uid);
    uids.set(pod.metadata.name, seen);
    for (const { name, state } of pod.status.containerStatuses ?? []) {
      const reason = state?.terminated?.reason;
      if (reason === undefined) continue;
      const key = `${pod.metadata.name}/${name}`;
      reasons.set(key, (reasons.get(key) ?? new Set<string>()).add(reason));
    }
  };
  list.items.forEach(remember);
  const stopped = new AbortController();
  let broken: unknown;
  const watch = async () => {
    const events = podResource.watch({
      signal: stopped.signal,
      namespace,
      labelSelector: selector,
      resourceVersion: list.resourceVersion,
    });
    for await (const event of events) {
      if (event.type === 'ERROR') broken = new Error(`pod watch: ${JSON.stringify(event.object)}`);
      else if (event.type !== 'BOOKMARK') remember(event.object);
    }
    if (!stopped.signal.aborted) broken = new Error('pod watch ended before it was stopped');
  };
  watch().catch((error: unknown) => (broken = error));
  return {
    uidsOf(name) {
      if (broken) throw new Error('the pod watch broke; pods may have been missed', { cause: broken });
      return [...(uids.get(name) ?? [])];
    },
    terminationReasonsOf(name, container) {
      if (broken) throw new Error('the pod watch broke; pods may have been missed', { cause: broken });
      return [...(reasons.get(`${name}/${container}`) ?? [])];
    },
    stop: () => {
      stopped.abort();
    },
  };
}

/** Whether the pod's container (its only one when `container` is omitted) has terminated, or the pod is gone. */
async function containerExited(
  admin: KubeConfig,
  namespace: string,
  pod: string,
  container: string | undefined,
): Promise<boolean> {
  const found = await resource<Pod>(admin, PODS).getOptional({ namespace, name: pod });
  if (!found) return true;
  const statuses = found.status.containerStatuses ?? [];
  const ours = container ? statuses.find((c) => c.name === container) : statuses[0];
  return ours?.state?.terminated !== undefined;
}

export interface FollowedLog {
  /** The log read so far. */
  text(): string;
  /**
   * Why the log may be incomplete: a read returned something other than the container's log (the
   * kubelet's error text) and no earlier read had reached the container's end.
   */
  failure(): PodLogReadError | undefined;
  /** The complete log once the container has exited (or what was read when the signal aborted). */
  untilExit: Promise<string>;
  /**
   * Whether a read ever began: false for a pod deleted before its container started (e.g. one a
   * Deployment scaled away while it was still being created), which has no log to read.
   */
  started(): boolean;
}

/**
 * Follows a container's log as `kubectl logs -f` does, from the container's start to its exit, so a
 * pod that is deleted later (a failover, a rolling update, an uninstall) leaves its complete log,
 * shutdown included. Resolves once a read has begun (its first text arrived, or it ended empty).
 * `container` may be omitted for a pod with a single container.
 *
 * Every read is timestamped and checked line by line, so the kubelet's error text (sent under a 200 once
 * the pod's log file is gone) never becomes the log: such a read changes nothing, and is reported by
 * `failure()` unless an earlier read already followed the container to its end (the kubelet ends a
 * followed log only when the container stops, so that read holds all of it).
 */
async function followPodLog(
  admin: KubeConfig,
  namespace: string,
  pod: string,
  signal: AbortSignal,
  container?: string,
  progress: ReadProgress = { reads: 0 },
): Promise<FollowedLog> {
  const query: PodLogQuery = { follow: true, ...TIMESTAMPED_LOG_QUERY };
  if (container) query.container = container;
  const what = `log of pod ${namespace}/${pod}${container ? ` container ${container}` : ''}`;
  let text = '';
  // A read that ran until the kubelet ended it, with the container's output in it: all of its log.
  let followedToTheEnd = false;
  let failure: PodLogReadError | undefined;
  let opened: () => void = () => undefined;
  const open = new Promise<void>((resolve) => (opened = resolve));
  let started = false;
  const aborted = () => signal.aborted;
  const untilExit = (async () => {
    while (!aborted()) {
      // Every read starts at the container's start: it replaces the text once it has read as much.
      const reader = new TimestampedLogReader(what);
      const keep = () => {
        if (!reader.failure && reader.text.length >= text.length) text = reader.text;
      };
      // A read that has not begun within READ_OPEN_DEADLINE_MS is given up and made again: nothing
      // bounds how long the API server and the kubelet may hold a followed log's answer back, and a
      // pod whose read never begins would be missing from `byPod`.
      const read = new AbortController();
      let began = false;
      const deadline = setTimeout(() => {
        if (!began) read.abort();
      }, READ_OPEN_DEADLINE_MS);
      progress.reads++;
      try {
        await streamPodLog(
          admin,
          { namespace, name: pod },
          query,
          (chunk) => {
            reader.push(chunk);
            keep();
          },
          AbortSignal.any([signal, read.signal]),
          () => {
            began = true;
            started = true;
            opened();
          },
        );
        // An abort ends the read quietly, part-way: what it read stands.
        if (aborted()) break;
        if (read.signal.aborted) {
          progress.lastError = `no answer within ${READ_OPEN_DEADLINE_MS} ms`;
          continue;
        }
        reader.end();
        if (reader.failure) {
          if (!followedToTheEnd) failure = reader.failure;
        } else {
          // The whole current log: after a restart it is the new container's, shorter or not.
          text = reader.text;
          failure = undefined;
          if (text !== '') followedToTheEnd = true;
        }
        // The stream also ends early, empty, for a container that is only just starting: read again
        // unless the container has really exited (or the pod is gone).
        if (await containerExited(admin, namespace, pod, container)) break;
        await sleep(250);
      } catch (error) {
        progress.lastError = error instanceof Error ? error.message : String(error);
        // 404: the pod is gone, with what was read; 400: its container has not started yet.
        if (error instanceof KubeApiError && error.status === 404) break;
        await sleep(250);
      } finally {
        clearTimeout(deadline);
      }
    }
    opened();
    return text;
  })();
  await open;
  return { text: () => text, failure: () => failure, untilExit, started: () => started };
}

/** How long a followed log's read may go without its first text before it is made again. */
const READ_OPEN_DEADLINE_MS = 10_000;

/** A pod's reads so far, for a message that says why its log is missing. */
interface ReadProgress {
  reads: number;
  lastError?: string;
}

export interface PodLogs {
  /**
   * Each pod's log so far, by pod name, for every pod that matched the selector since the start and
   * whose container started (see {@link FollowedLog.started}; a pod whose read has not begun yet is
   * left out too). Throws if the log of one of them could not be read whole (see
   * {@link FollowedLog.failure}).
   */
  byPod(): Map<string, string>;
  /**
   * The pods found whose log `byPod` leaves out (no read has begun yet, or it never will: the pod was
   * deleted before its container started), each with its reads so far and the last one's error.
   */
  withoutLog(): string[];
  stop(): void;
}

/** {@link followPodLog} for every pod that matches `selector` from now until `stop`. */
export function followPodLogs(
  admin: KubeConfig,
  namespace: string,
  selector: string,
  container: string,
): PodLogs {
  const followed = new Map<string, FollowedLog | undefined>();
  const progress = new Map<string, ReadProgress>();
  const stopped = new AbortController();
  const discover = async () => {
    while (!stopped.signal.aborted) {
      for (const pod of await pods(admin, namespace, selector).catch(() => []))
        if (!followed.has(pod.name)) {
          followed.set(pod.name, undefined);
          const reads: ReadProgress = { reads: 0 };
          progress.set(pod.name, reads);
          void followPodLog(admin, namespace, pod.name, stopped.signal, container, reads).then((log) =>
            followed.set(pod.name, log),
          );
        }
      await sleep(500);
    }
  };
  void discover();
  return {
    byPod: () => {
      const failed = [...followed.values()].flatMap((log) => log?.failure() ?? []);
      if (failed.length > 0)
        throw new Error(`the pod log collector failed: ${failed.map((error) => error.message).join('; ')}`);
      const read = [...followed].flatMap(([pod, log]) =>
        log?.started() ? [[pod, log.text()] as const] : [],
      );
      return new Map(read);
    },
    withoutLog: () =>
      [...followed]
        .filter(([, log]) => log?.started() !== true)
        .map(([pod]) => {
          const { reads, lastError } = progress.get(pod) ?? { reads: 0 };
          return `${pod} (${reads} reads${lastError ? `, the last: ${lastError}` : ''})`;
        }),
    stop: () => {
      stopped.abort();
    },
  };
}

/**
 * Whether a refused request in a controller's log is its leader election's, made after `helm
 * uninstall` began: helm deletes the RBAC while the pods are still stopping, so the leader's release of
 * the Lease and a standby's last try to acquire it may be refused (the Lease then lapses). Leader
 * election talks to nothing but the Lease; any other refused request is a defect.
 */
export function isLeaseRequestOfUninstall(record: Record<string, unknown>): boolean {
  return record.component === 'leader-election' || record.component === 'sharding';
}

/** The pod named by a Lease's holderIdentity (client-go's identity is `<pod name>_<uuid>`). */
export async function leaseHolderPod(admin: KubeConfig, namespace: string, lease: string): Promise<string> {
  const { spec } = await resource<KubeObject & { spec: { holderIdentity?: string } }>(admin, LEASES).get({
    namespace,
    name: lease,
  });
  const holder = spec.holderIdentity ?? '';
  assert.ok(holder, `Lease ${lease} has no holder`);
  return holder.split('_')[0] ?? holder;
}

/**
 * Waits until one of the live pods matching `selector` holds the Lease, and returns its name. An
 * install into a namespace that still holds the Lease of an earlier install (the controllers leave it,
 * as they would for any user, and the README's namespaces are the same on every run) leads only once
 * that Lease has expired as its candidates saw it: client-go's algorithm trusts its own clock, not the
 * record's renewTime, so that takes up to one lease duration (15 s, the charts' default) after they
 * first read it. Tests that expect work to be done at once wait for this first.
 */
export async function leaderAmong(
  admin: KubeConfig,
  namespace: string,
  lease: string,
  selector: string,
  timeoutMs = 30_000,
): Promise<string> {
  let leader = '';
  await eventually(
    async () => {
      leader = await leaseHolderPod(admin, namespace, lease);
      const live = (await pods(admin, namespace, selector)).filter((pod) => !pod.deleting);
      assert.ok(
        live.some((pod) => pod.name === leader),
        `the Lease is held by ${leader}, not one of ${live.map((pod) => pod.name).join(', ')}`,
      );
    },
    { timeoutMs, intervalMs: 250 },
  );
  return leader;
}

/**
 * Starts a real Prometheus that discovers the chart's metrics Service through the Kubernetes API
 * (`kubernetes_sd_configs`, role endpointslice, kept by Service name and port name `metrics`, as a
 * ServiceMonitor selects it) and scrapes every replica by pod IP over the node bridge. Waits until
 * `replicas` targets are `up`, `leader_election_master_status` sums to exactly 1 over them (`sharded`:
 * `loopwright_shard_owned_fraction` sums to 1, every part of the hash space held by exactly one replica,
 * and every replica holds a part), and `controller_runtime_reconcile_total` and `workqueue_adds_total`
 * have samples for each of
 * `controllers`; then `whileScraping`, if given, with that Prometheus (which loads `rule_files`). The
 * series carry `namespace` and `pod` labels, as a ServiceMonitor's do.
 */
export async function assertPodsScrapedByPrometheus(options: {
  admin: KubeConfig;
  namespace: string;
  service: string;
  replicas: number;
  controllers: readonly string[];
  /** The release runs sharded (`sharding.enabled`): every replica active, no leader. */
  sharded?: boolean;
  rule_files?: string[];
  whileScraping?: (prometheus: Prometheus, job: string) => Promise<void>;
}): Promise<void> {
  const { admin, namespace, service, replicas, controllers } = options;
  const cluster = admin.getCurrentCluster();
  const user = admin.getCurrentUser();
  if (!cluster?.caFile && !cluster?.caData) throw new Error('the admin kubeconfig has no CA');
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-e2e-sd-'));
  const caFile = cluster.caFile ?? join(dir, 'ca.crt');
  if (!cluster.caFile) await writeFile(caFile, Buffer.from(cluster.caData ?? '', 'base64'));
  await writeFile(join(dir, 'token'), user?.token ?? '', { mode: 0o600 });
  const job = `${namespace}/${service}`;
  const prometheus = await startPrometheus({
    rule_files: options.rule_files,
    scrape_configs: [
      {
        job_name: job,
        kubernetes_sd_configs: [
          {
            role: 'endpointslice',
            api_server: cluster.server,
            tls_config: { ca_file: caFile },
            authorization: { credentials_file: join(dir, 'token') },
            namespaces: { names: [namespace] },
          },
        ],
        relabel_configs: [
          { source_labels: ['__meta_kubernetes_service_name'], regex: service, action: 'keep' },
          { source_labels: ['__meta_kubernetes_endpointslice_port_name'], regex: 'metrics', action: 'keep' },
          { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
          { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
        ],
      },
    ],
  });
  const query = async (expression: string) =>
    (
      await prometheus.get<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `/api/v1/query?query=${encodeURIComponent(expression)}`,
      )
    ).result;
  try {
    // The pods are scraped at their addresses on the node bridge.
    const { hostAddress } = loadTestNode();
    const podNetwork = hostAddress.split('.').slice(0, 3).join('.');
    await eventually(
      async () => {
        const targets = await prometheus.get<{
          activeTargets: { labels: Record<string, string>; health: string; scrapeUrl: string }[];
        }>('/api/v1/targets');
        const ours = targets.activeTargets.filter((t) => t.labels.job === job);
        assert.equal(ours.length, replicas, JSON.stringify(ours));
        for (const target of ours) {
          assert.equal(target.health, 'up', JSON.stringify(target));
          assert.ok(target.scrapeUrl.startsWith(`http://${podNetwork}.`), target.scrapeUrl);
        }
        if (options.sharded) {
          const owned = await query(`loopwright_shard_owned_fraction{job="${job}"}`);
          assert.equal(owned.length, replicas, `every replica's owned share: ${JSON.stringify(owned)}`);
          for (const share of owned) assert.ok(Number(share.value[1]) > 0, JSON.stringify(share));
          const sum = owned.reduce((total, share) => total + Number(share.value[1]), 0);
          // 256 buckets of 1/256 each: the sum of the shares is exact in binary.
          assert.equal(sum, 1, `the owned shares sum to ${sum}`);
        } else {
          const leaders = await query(`sum(leader_election_master_status{job="${job}"})`);
          assert.equal(leaders[0]?.value[1], '1', 'exactly one replica leads');
        }
        for (const metric of ['controller_runtime_reconcile_total', 'workqueue_adds_total']) {
          const result = await query(`${metric}{job="${job}"}`);
          for (const name of controllers)
            assert.ok(
              result.some((r) => r.metric.controller === name || r.metric.name === name),
              `${metric} of ${name}: ${JSON.stringify(result)}`,
            );
        }
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    await options.whileScraping?.(prometheus, job);
  } catch (error) {
    throw new Error(`prometheus output:\n${prometheus.output()}`, { cause: error });
  } finally {
    await prometheus.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
