/**
 * at-scheduler end to end on the real node, exactly as a user runs it: the root README's `helm install`
 * command, read from the README (release `at-scheduler` in `loopwright`), plus only `--wait` (and, for
 * the second mode, `watchNamespaces`), of the unchanged chart into a namespace that enforces the
 * restricted Pod Security profile, two replicas Ready through the kubelet's probes, the controller on
 * its in-cluster ServiceAccount token, and Ats that run real `/bin/sh -c` commands in busybox pods.
 * Both install modes (all namespaces; the `watchNamespaces` list), one after the other under the same
 * release name; the first also proves the outcomes a user relies on (success, failure, OOM kill,
 * ttlSecondsAfterFinished), failover, a rolling `helm upgrade`, Prometheus and the uninstall. `helm test`
 * passes after each install and the upgrade, and fails while the Deployment is scaled to 0.
 */
import { helm } from '@loopwright/cluster';
import { eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '@loopwright/client';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { normalizeRules, repoRoot, type PolicyRule } from './charts.ts';
import {
  adminKubeconfigPath,
  objectExists,
  effectiveRules,
  resource,
  serviceAccountKubeconfig,
  type ServiceAccountCredentials,
} from './kube.ts';
import {
  enforceRestricted,
  followPodLogs,
  isLeaseRequestOfUninstall,
  leaderAmong,
  leaseHolderPod,
  podLog,
  pods,
  restrictedNamespace,
  watchPodUids,
  type PodLogs,
  type PodUidWatch,
} from './node.ts';
import { assertHelmTestFails, assertHelmTestPasses, deleteHelmTestLeftovers } from './helm-test.ts';
import { assertObservedByPrometheus } from './observability.ts';
import { promtoolCheckMetrics } from './prometheus.ts';
import { fromRegistry, readmeInstall, testOnlyArgs } from './readme-install.ts';
import { assertRunsReleasedImage, e2eReleases, releasedChartArgs } from './release.ts';
import {
  ATS,
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  CUSTOM_RESOURCE_DEFINITIONS,
  DEPLOYMENTS,
  describeObject,
  EVENTS,
  LEASES,
  NAMESPACES,
  PODS,
  ref,
  ROLE_BINDINGS,
  ROLES,
  SECRETS,
  SERVICE_ACCOUNTS,
  SERVICES,
  type ObjectRef,
} from './resources.ts';

const expectedRules = JSON.parse(
  await readFile(new URL('../expected/at-scheduler.effective-rules.json', import.meta.url), 'utf8'),
) as {
  allNamespaces: Record<'releaseNamespace' | 'otherNamespace', PolicyRule[]>;
  watchNamespaces: Record<'releaseNamespace' | 'watchedNamespace' | 'otherNamespace', PolicyRule[]>;
  nonResource: PolicyRule[];
};

/** The chart's defaults this suite relies on (it sets none of them). */
const CHART_DEFAULTS = { replicas: 2, metricsPort: 8080, leaseName: 'at-scheduler' } as const;
const AT_PODS = 'app.kubernetes.io/managed-by=at-scheduler';
const CRD = 'ats.cnat.programming-kubernetes.info';

interface At extends KubeObject {
  metadata: { namespace?: string; name: string };
  spec?: AtSpec;
  status?: {
    phase?: string;
    outcome?: string;
    podName?: string;
    startTime?: string;
    completionTime?: string;
    exitCode?: number;
    reason?: string;
    message?: string;
  };
}

interface AtSpec {
  schedule: string;
  command: string;
  ttlSecondsAfterFinished?: number;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

/** An RFC 3339 schedule `ms` from now. */
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

function createAt(admin: KubeConfig, namespace: string, name: string, spec: AtSpec): Promise<At> {
  return resource<At>(admin, ATS).create({
    apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
    kind: 'At',
    metadata: { namespace, name },
    spec,
  });
}

function getAt(admin: KubeConfig, namespace: string, name: string): Promise<At> {
  return resource<At>(admin, ATS).get({ namespace, name });
}

async function waitForPhase(
  admin: KubeConfig,
  namespace: string,
  name: string,
  phase: 'PENDING' | 'DONE',
  timeoutMs = 45_000,
): Promise<At> {
  let at: At | undefined;
  await eventually(
    async () => {
      at = await getAt(admin, namespace, name);
      assert.equal(at.status?.phase, phase, `At ${name}: ${JSON.stringify(at.status)}`);
    },
    { timeoutMs, intervalMs: 250 },
  );
  assert.ok(at);
  return at;
}

/** The At ran its command in exactly one pod, ever, the one its status names, and not early. */
function assertRanOnce(at: At, schedule: string, podUids: PodUidWatch): void {
  const podName = at.status?.podName;
  assert.ok(podName, `At ${at.metadata.name} records no pod`);
  assert.equal(podUids.uidsOf(podName).length, 1, `pods created for At ${at.metadata.name}`);
  assert.ok(Date.parse(at.status?.startTime ?? '') >= Date.parse(schedule), 'started before its schedule');
}

/**
 * The release's controller pods: the Deployment's selector labels. The release's `helm test` Pod has the
 * same instance label but another name (`at-scheduler-test`): it is no controller pod.
 */
const controllerPods = (release: string) =>
  `app.kubernetes.io/name=at-scheduler,app.kubernetes.io/instance=${release}`;

/** The release's controller pods, not counting those already terminating. */
async function livePods(admin: KubeConfig, namespace: string, release: string) {
  return (await pods(admin, namespace, controllerPods(release))).filter((p) => !p.deleting);
}

async function assertReplicasReady(
  admin: KubeConfig,
  namespace: string,
  release: string,
  replicas: number = CHART_DEFAULTS.replicas,
): Promise<void> {
  await eventually(
    async () => {
      const live = await livePods(admin, namespace, release);
      assert.equal(live.length, replicas, JSON.stringify(live));
      for (const pod of live) assert.ok(pod.ready && pod.restarts === 0, JSON.stringify(pod));
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

const SHARD_RING_LABEL = 'sharding.loopwright.dev/ring';
const SHARD_BUCKETS_ANNOTATION = 'sharding.loopwright.dev/buckets';
const BUCKETS = 256;

/**
 * What a release renders in its own namespace: the Deployment, its ServiceAccount, the metrics Service
 * and the Role (and binding) for its Leases, `leader-election` or `sharding`.
 */
function namespacedObjects(release: string, system: string, leaseRole: 'leader-election' | 'sharding') {
  return [
    ref(DEPLOYMENTS, release, system),
    ref(SERVICE_ACCOUNTS, release, system),
    ref(SERVICES, `${release}-metrics`, system),
    ref(ROLES, `${release}-${leaseRole}`, system),
    ref(ROLE_BINDINGS, `${release}-${leaseRole}`, system),
  ];
}

function isSharded(values: Record<string, unknown>): boolean {
  return (values.sharding as { enabled?: boolean } | undefined)?.enabled === true;
}

function replicasOf(values: Record<string, unknown>): number {
  return typeof values.replicaCount === 'number' ? values.replicaCount : CHART_DEFAULTS.replicas;
}

/** The buckets in a member Lease's annotation (`0-12,40,42-255`). */
function bucketsOf(text: string): number[] {
  return text === ''
    ? []
    : text.split(',').flatMap((run) => {
        const [first, last = first] = run.split('-').map(Number);
        return Array.from({ length: (last ?? 0) - (first ?? 0) + 1 }, (_, i) => (first ?? 0) + i);
      });
}

/** Each member of the release's ring (the chart's default ring: its full name) by pod, with its buckets. */
async function ringMembers(
  admin: KubeConfig,
  namespace: string,
  ring: string,
): Promise<Map<string, number[]>> {
  const leases = await resource<KubeObject & { spec: { holderIdentity?: string } }>(admin, LEASES).list({
    namespace,
    labelSelector: `${SHARD_RING_LABEL}=${ring}`,
  });
  return new Map(
    leases.items.map((lease) => [
      (lease.spec.holderIdentity ?? '').split('_')[0] ?? '',
      bucketsOf(lease.metadata?.annotations?.[SHARD_BUCKETS_ANNOTATION] ?? ''),
    ]),
  );
}

/**
 * Waits until `replicas` live pods each hold a member Lease with a share of the ring, the shares
 * covering the 256 buckets exactly once, and no Lease of another pod is left; returns the shares.
 */
async function ringSettled(
  admin: KubeConfig,
  namespace: string,
  release: string,
  replicas: number,
): Promise<Map<string, number[]>> {
  let members = new Map<string, number[]>();
  await eventually(
    async () => {
      const live = (await livePods(admin, namespace, release)).map((pod) => pod.name).sort();
      assert.equal(live.length, replicas, `live pods: ${live.join(', ')}`);
      members = await ringMembers(admin, namespace, release);
      assert.deepEqual([...members.keys()].sort(), live, 'a member Lease per live pod, none else');
      const all = [...members.values()].flat().sort((a, b) => a - b);
      assert.deepEqual(
        all,
        Array.from({ length: BUCKETS }, (_, i) => i),
        'every bucket held once',
      );
      for (const [pod, buckets] of members) assert.ok(buckets.length > 0, `${pod} holds nothing`);
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return members;
}

/** The controller pods that logged a reconcile of the At `namespace/name` (`reconciling`, at debug). */
function reconcilersOf(logs: Map<string, string>, namespace: string, name: string): string[] {
  return [...logs]
    .filter(([, log]) =>
      logLines(log).some(
        (line) =>
          line.message === 'reconciling' &&
          line.controller === 'at-scheduler' &&
          line.namespace === namespace &&
          line.name === name,
      ),
    )
    .map(([pod]) => pod);
}

interface PodSpec extends KubeObject {
  spec: {
    containers: {
      name: string;
      args?: string[];
      env?: { name: string; value?: string }[];
      readinessProbe?: { httpGet?: { path: string } };
      livenessProbe?: { httpGet?: { path: string } };
    }[];
  };
}

function controllerContainerOf(pod: PodSpec) {
  const container = pod.spec.containers.find((c) => c.name === 'controller');
  assert.ok(container, 'no controller container');
  return container;
}

/** The JSON log lines of a controller pod. */
function logLines(log: string): Record<string, unknown>[] {
  return log
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Where in-cluster clients reach the API server: the `kubernetes` Service (10.96.0.1:443 here). */
async function kubernetesServiceUrl(admin: KubeConfig): Promise<string> {
  const service = await resource<KubeObject & { spec: { clusterIP: string; ports: { port: number }[] } }>(
    admin,
    SERVICES,
  ).get({ namespace: 'default', name: 'kubernetes' });
  return `https://${service.spec.clusterIP}:${service.spec.ports[0]?.port ?? 0}`;
}

/**
 * Every controller replica found its cluster in-cluster: its first log line is `target cluster` with
 * the `kubernetes` Service's address and the in-cluster context, and the Deployment gives it no
 * kubeconfig (no KUBECONFIG variable, no flag).
 */
async function assertInClusterConfig(
  admin: KubeConfig,
  namespace: string,
  release: string,
  namespaces: string | string[],
): Promise<void> {
  const deployment = await resource<KubeObject & { spec: { template: PodSpec } }>(admin, DEPLOYMENTS).get({
    namespace,
    name: release,
  });
  const container = controllerContainerOf(deployment.spec.template);
  const env = (container.env ?? []).map((e) => e.name);
  assert.ok(!env.includes('KUBECONFIG') && !env.includes('CONTEXT'), env.join(' '));
  assert.equal(container.args, undefined);
  const server = await kubernetesServiceUrl(admin);
  for (const pod of await livePods(admin, namespace, release)) {
    const [first] = logLines(await podLog(admin, namespace, pod.name, { container: 'controller' }));
    assert.deepEqual(
      first && {
        message: first.message,
        server: first.server,
        context: first.context,
        namespaces: first.namespaces,
      },
      { message: 'target cluster', server, context: 'inClusterContext', namespaces },
      pod.name,
    );
  }
}

/** What the chart's ServiceAccount may do (asked as the ServiceAccount) in each namespace. */
async function assertEffectiveRules(
  sa: ServiceAccountCredentials,
  expected: Record<string, PolicyRule[]>,
): Promise<void> {
  for (const [namespace, rules] of Object.entries(expected)) {
    const review = await effectiveRules(sa.kubeConfig, namespace);
    assert.equal(review.incomplete, false);
    assert.deepEqual(review.nonResourceRules, normalizeRules(expectedRules.nonResource));
    assert.deepEqual(review.resourceRules, normalizeRules(rules), namespace);
  }
}

async function assertPromtoolClean(admin: KubeConfig, namespace: string, release: string): Promise<void> {
  const [replica] = await livePods(admin, namespace, release);
  assert.ok(replica?.ip, 'no replica with an IP');
  // Straight from the host to the pod over the node bridge, as Prometheus scrapes it.
  const result = await promtoolCheckMetrics(`http://${replica.ip}:${CHART_DEFAULTS.metricsPort}/metrics`);
  assert.equal(result.findings, '');
  assert.equal(result.exitCode, 0);
}

/**
 * `helm test` of the release passes: the CRD is served, a running replica holds the Lease, /metrics
 * answers on the metrics Service (the chart's fullname is the release's, which is named like the chart).
 */
async function assertHelmTestPassed(
  admin: KubeConfig,
  namespace: string,
  release: string,
  sharded?: { replicas: number },
): Promise<void> {
  await assertHelmTestPasses(admin, release, namespace, {
    chart: 'at-scheduler',
    fullname: release,
    lease: CHART_DEFAULTS.leaseName,
    ...(sharded ? { sharded: { ring: release, replicas: sharded.replicas } } : {}),
  });
}

/** Sets the controller Deployment's replicas (its scale subresource, as `kubectl scale` does). */
async function scaleController(admin: KubeConfig, namespace: string, release: string, replicas: number) {
  await resource(admin, DEPLOYMENTS)
    .subresource('scale')
    .patch({ namespace, name: release }, { merge: { spec: { replicas } } });
}

/**
 * `helm uninstall --wait`, then: the release's pods are gone, and so is every object the chart made
 * (`objects`). The CRD and the users' Ats stay (crds/ is never deleted by helm). The Lease
 * stays too: the controller creates it (helm never knew it), it holds no state but who led last, it
 * costs nothing, and a reinstall into the namespace simply takes it over; deleting the namespace
 * removes it. What must not happen is that it looks like the chart's: it carries no release label.
 * Resolves with the controller logs as they were when the uninstall started.
 */
async function assertUninstallLeavesOnlyTheCrd(
  run: Run,
  namespace: string,
  objects: ObjectRef[],
  userAts: { namespace: string; name: string }[],
  { sharded = false }: { sharded?: boolean } = {},
): Promise<Map<string, string>> {
  const { admin, release } = run;
  const logsBefore = run.logs.byPod();
  await helm(['uninstall', release, '--namespace', namespace, '--wait', '--timeout', '2m'], {
    kubeconfig: adminKubeconfigPath(),
  });
  await eventually(
    async () => {
      assert.deepEqual(await pods(admin, namespace, `app.kubernetes.io/instance=${release}`), []);
    },
    { timeoutMs: 75_000, intervalMs: 500 },
  );
  for (const object of objects)
    assert.equal(await objectExists(admin, object), false, `${describeObject(object)} is left`);
  const helmSecrets = await resource(admin, SECRETS).list({
    namespace,
    labelSelector: `owner=helm,name=${release}`,
  });
  assert.equal(helmSecrets.items.length, 0, 'helm kept the release history');
  assert.ok(await objectExists(admin, ref(CUSTOM_RESOURCE_DEFINITIONS, CRD)));
  for (const at of userAts) assert.ok(await objectExists(admin, { type: ATS, key: at }));
  // The leader's Lease is left, as client-go's controllers leave theirs. A sharded release's member
  // Leases are deleted by their pods as they stop, unless the RBAC went first; then they expire.
  if (!sharded) {
    const lease = await resource(admin, LEASES).get({ namespace, name: CHART_DEFAULTS.leaseName });
    assert.equal(lease.metadata?.labels?.['app.kubernetes.io/instance'], undefined);
  }
  return logsBefore;
}

/** The `type/reason` of every Event regarding the At `name`, sorted. */
async function eventsOf(admin: KubeConfig, namespace: string, name: string): Promise<string[]> {
  const events = await resource<KubeObject & { reason: string; type: string; regarding: { name: string } }>(
    admin,
    EVENTS,
  ).list({ namespace });
  return events.items
    .filter((e) => e.regarding.name === name)
    .map((e) => `${e.type}/${e.reason}`)
    .sort();
}

/**
 * A succeeded At's Events are in the API. The recorder writes them in the background, after the status
 * (at background priority, behind any reconcile's requests): on a busy node that can be seconds later.
 * Waited for before the uninstall, whose revoked ServiceAccount would refuse a late one.
 */
async function assertEventsWritten(admin: KubeConfig, namespace: string, name: string): Promise<void> {
  await eventually(async () => {
    assert.deepEqual(await eventsOf(admin, namespace, name), ['Normal/Started', 'Normal/Succeeded']);
  });
}

const REFUSED = /\b40[13]\b|forbidden|unauthorized/i;
const JWT = /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/;

/**
 * The complete log of every controller pod of the run, shutdowns included, holds no token: neither
 * the one minted for the least-privilege check nor any JWT (the pods' own projected tokens are JWTs
 * this test cannot read). Up to the uninstall (`logsAtUninstall`) nothing was refused (no 401/403,
 * no forbidden): the failover's and the rolling update's shutdowns happen with the chart's RBAC in
 * place. helm deletes the RBAC and the ServiceAccount in the same breath as the Deployment, so the
 * pods stop without rights: the one refusal that may follow is their attempt to hand the Lease over
 * (it then expires after its 15 s); no other write of theirs may be refused.
 */
function assertLogsClean(
  logs: PodLogs,
  logsAtUninstall: Map<string, string>,
  sa: ServiceAccountCredentials,
  minimumPods: number,
): void {
  const byPod = logs.byPod();
  assert.ok(
    byPod.size >= minimumPods,
    `logs of ${byPod.size} pods (${[...byPod.keys()].join(', ')}); found without a log: ${logs.withoutLog().join('; ') || 'none'}`,
  );
  for (const [pod, log] of byPod) {
    assert.ok(log.length > 0, `${pod}: empty log`);
    assert.doesNotMatch(log, JWT, `${pod}: a JWT in the log`);
    assert.ok(!log.includes(sa.token), `${pod}: the ServiceAccount token in the log`);
    const untilUninstall = logsAtUninstall.get(pod) ?? '';
    assert.ok(log.startsWith(untilUninstall), `${pod}: the log was not followed from its start`);
    assert.doesNotMatch(untilUninstall, REFUSED, pod);
    const refusedAtUninstall = logLines(log.slice(untilUninstall.length)).filter((line) =>
      REFUSED.test(JSON.stringify(line)),
    );
    for (const line of refusedAtUninstall)
      assert.ok(isLeaseRequestOfUninstall(line), `${pod}: ${JSON.stringify(line)}`);
  }
}

/**
 * Namespaces, the install and its watchers, undone in reverse order whatever `before` got to. The
 * release and its namespace are the README's: both modes install `at-scheduler` into `loopwright`, one
 * after the other, so each run uninstalls with `--wait` (pods gone) and leaves the namespace (it is
 * not the test's; the controller's Lease in it stays, as a user's would).
 */
class Run {
  readonly admin = loadTestKubeConfig();
  readonly readme = fromRegistry(readmeInstall('at-scheduler'), e2eReleases().registry);
  readonly release = this.readme.release;
  readonly system = this.readme.namespace;
  readonly #cleanups: (() => unknown)[] = [];
  #logs: PodLogs | undefined;

  /** Every controller pod's log, followed from before the install. */
  get logs(): PodLogs {
    if (!this.#logs) throw new Error('not installed');
    return this.#logs;
  }

  onCleanup(cleanup: () => unknown): void {
    this.#cleanups.push(cleanup);
  }

  /** A work namespace of the test's own (deleted at the end, with its Ats and their pods). */
  async namespace(prefix: string): Promise<TestNamespace> {
    const namespace = await restrictedNamespace(this.admin, prefix);
    this.onCleanup(() => namespace.cleanup());
    return namespace;
  }

  /**
   * The README's install, word for word but for the registry (`helm install at-scheduler
   * oci://<node registry>/loopwright/charts/at-scheduler --version <README's> -n loopwright
   * --create-namespace`, run from the repository root), into the namespace made restricted first, plus
   * `--wait` and `values` only.
   */
  async install(values: Record<string, unknown> = {}): Promise<string> {
    await enforceRestricted(this.admin, this.system);
    const logs = followPodLogs(this.admin, this.system, controllerPods(this.release), 'controller');
    this.#logs = logs;
    this.onCleanup(() => {
      logs.stop();
    });
    // A failed helm test's Pod, which helm uninstall leaves (after it: cleanups run in reverse).
    this.onCleanup(() => deleteHelmTestLeftovers(this.admin, this.system, this.release));
    // --wait: the next install of the same release (the other mode, the next run) finds no pod of this one.
    this.onCleanup(() =>
      helm(
        [
          'uninstall',
          this.release,
          '--namespace',
          this.system,
          '--ignore-not-found',
          '--wait',
          '--timeout',
          '2m',
        ],
        { kubeconfig: adminKubeconfigPath(), timeoutMs: 150_000 },
      ),
    );
    const { stdout } = await helm(
      [...this.readme.args, ...testOnlyArgs(this.readme, { timeout: '2m', values })],
      { kubeconfig: adminKubeconfigPath(), cwd: repoRoot, timeoutMs: 150_000 },
    );
    // The tests expect Ats to be taken on at once: a replica of this install leads first (an earlier
    // install's Lease, left in the README's namespace, lapses as client-go sees it). Sharded: every
    // replica holds its share of the ring.
    if (isSharded(values)) await ringSettled(this.admin, this.system, this.release, replicasOf(values));
    else await leaderAmong(this.admin, this.system, CHART_DEFAULTS.leaseName, controllerPods(this.release));
    return stdout;
  }

  async cleanup(): Promise<void> {
    if (process.env.E2E_SHOW_OUTPUT)
      for (const [pod, log] of this.#logs?.byPod() ?? []) process.stderr.write(`--- ${pod}\n${log}`);
    for (const cleanup of this.#cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  }
}

describe('at-scheduler on the node, all namespaces', () => {
  const run = new Run();
  const { admin, release, system } = run;
  let work: TestNamespace;
  let other: TestNamespace;
  let installOutput: string;
  let podUids: PodUidWatch;
  let logsAtUninstall: Map<string, string>;
  let sa: ServiceAccountCredentials;

  before(async () => {
    work = await run.namespace('e2e-at-work');
    other = await run.namespace('e2e-at-other');
    podUids = await watchPodUids(admin, work.name, AT_PODS);
    run.onCleanup(() => {
      podUids.stop();
    });
    installOutput = await run.install();
    sa = await serviceAccountKubeconfig(admin, system, release);
    run.onCleanup(() => sa.remove());
  });
  after(() => run.cleanup());

  test('helm install --wait: two replicas Ready through their probes, restricted profile, NOTES', async () => {
    const { stdout } = await helm(['status', release, '--namespace', system, '--output', 'json'], {
      kubeconfig: adminKubeconfigPath(),
    });
    assert.equal((JSON.parse(stdout) as { info: { status: string } }).info.status, 'deployed');
    assert.match(installOutput, new RegExp(`installed as ${release} in ${system}\\.`));
    assert.match(installOutput, /Watching: all namespaces\./);
    assert.match(installOutput, new RegExp(`Lease ${system}/at-scheduler, 2 replicas`));
    // The pods were admitted by the README's namespace, which enforces the restricted profile.
    const namespace = await resource(admin, NAMESPACES).get({ name: system });
    assert.equal(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
    const live = await livePods(admin, system, release);
    assert.equal(live.length, CHART_DEFAULTS.replicas);
    for (const pod of live) {
      assert.ok(pod.ready && pod.restarts === 0, JSON.stringify(pod));
      // Ready is the kubelet's verdict from these probes: nothing else marks the pods Ready here.
      const container = controllerContainerOf(
        await resource<PodSpec>(admin, PODS).get({ namespace: system, name: pod.name }),
      );
      assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
      assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
      // The README's release, pulled by containerd from the registry the release was pushed to.
      await assertRunsReleasedImage(admin, system, pod.name, 'at-scheduler', e2eReleases().current);
    }
    assert.ok(await objectExists(admin, ref(CLUSTER_ROLES, release)));
  });

  test('helm test passes: the CRD served, the Lease held by a running replica, /metrics on the Service', async () => {
    await assertHelmTestPassed(admin, system, release);
  });

  test('the controller runs on its in-cluster ServiceAccount token, no kubeconfig', async () => {
    await assertInClusterConfig(admin, system, release, 'all');
  });

  test('least privilege: the ServiceAccount may do exactly the checked-in list', async () => {
    const expected = expectedRules.allNamespaces;
    await assertEffectiveRules(sa, {
      [system]: expected.releaseNamespace,
      [work.name]: expected.otherNamespace,
      [other.name]: expected.otherNamespace,
    });
  });

  test('Ats run real commands: output, exit codes, termination message, OOM kill, TTL', async (t) => {
    const schedule = inMs(3000);
    const ats: Record<string, AtSpec> = {
      echo: { schedule, command: 'echo hello from a real pod' },
      fail: { schedule, command: 'echo boom >&2; exit 3' },
      // The shell itself grows past the limit: the kernel's OOM killer ends the command's main process.
      oom: {
        schedule,
        command: "echo allocating; a=$(head -c 100000000 /dev/zero | tr '\\0' x); echo survived",
        resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '16Mi' } },
      },
      ttl: { schedule, command: 'echo short-lived', ttlSecondsAfterFinished: 2 },
    };
    for (const [name, spec] of Object.entries(ats)) await createAt(admin, work.name, name, spec);
    for (const name of Object.keys(ats)) await waitForPhase(admin, work.name, name, 'PENDING');
    assert.ok(Date.now() < Date.parse(schedule), 'the Ats were PENDING (the CRD default) before their time');

    const echo = await waitForPhase(admin, work.name, 'echo', 'DONE');
    assertRanOnce(echo, schedule, podUids);
    assert.deepEqual(
      { outcome: echo.status?.outcome, exitCode: echo.status?.exitCode, reason: echo.status?.reason },
      { outcome: 'Succeeded', exitCode: 0, reason: 'Completed' },
    );
    assert.equal(
      await podLog(admin, work.name, 'echo-pod', { container: 'command' }),
      'hello from a real pod\n',
    );

    const fail = await waitForPhase(admin, work.name, 'fail', 'DONE');
    assertRanOnce(fail, schedule, podUids);
    assert.deepEqual(
      { outcome: fail.status?.outcome, exitCode: fail.status?.exitCode, reason: fail.status?.reason },
      { outcome: 'Failed', exitCode: 3, reason: 'Error' },
    );
    // FallbackToLogsOnError: the container's last log lines are the message.
    assert.equal(fail.status?.message, 'boom\n');

    const oom = await waitForPhase(admin, work.name, 'oom', 'DONE');
    assertRanOnce(oom, schedule, podUids);
    // The At passes on a reason the kubelet reported. That is OOMKilled, unless containerd handled the
    // container's exit before its OOM event (a known race under load: containerd issues 8180 and 12260):
    // the kubelet then reports Error (and may correct it later). The kill shows in the exit code and log.
    const reported = podUids.terminationReasonsOf('oom-pod', 'command');
    assert.ok(
      reported.length > 0 && reported.every((reason) => ['OOMKilled', 'Error'].includes(reason)),
      `the kubelet reported ${reported.join(', ')}`,
    );
    if (reported.includes('Error')) t.diagnostic(`the kubelet reported ${reported.join(', then ')}`);
    assert.deepEqual(
      { outcome: oom.status?.outcome, exitCode: oom.status?.exitCode },
      { outcome: 'Failed', exitCode: 137 },
    );
    assert.ok(reported.includes(oom.status?.reason ?? ''), `the At's reason ${oom.status?.reason}`);
    assert.equal(await podLog(admin, work.name, 'oom-pod', { container: 'command' }), 'allocating\n');

    const ttl = await waitForPhase(admin, work.name, 'ttl', 'DONE');
    assertRanOnce(ttl, schedule, podUids);
    assert.equal(ttl.status?.outcome, 'Succeeded');
    const deletableAt = Date.parse(ttl.status.completionTime ?? '') + 2000;
    let goneAt = 0;
    await eventually(
      async () => {
        assert.equal(await objectExists(admin, ref(PODS, 'ttl-pod', work.name)), false);
        goneAt = Date.now();
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    assert.ok(goneAt >= deletableAt, 'the finished pod was deleted before its TTL');
    // The TTL removes the pod only: the At keeps its outcome, and pods of Ats without a TTL stay.
    assert.equal((await getAt(admin, work.name, 'ttl')).status?.phase, 'DONE');
    assert.ok(await objectExists(admin, ref(PODS, 'echo-pod', work.name)));

    // Events, written with the ServiceAccount's rights (events.k8s.io create).
    await eventually(async () => {
      // A new At waits without a write or an Event: the first is its start.
      assert.deepEqual(await eventsOf(admin, work.name, 'echo'), ['Normal/Started', 'Normal/Succeeded']);
      const fail = await eventsOf(admin, work.name, 'fail');
      assert.ok(fail.includes('Warning/Failed'), JSON.stringify(fail));
    });
  });

  test('failover: the leader pod deleted, another replica takes over at once; every At runs exactly once', async () => {
    const leader = await leaseHolderPod(admin, system, CHART_DEFAULTS.leaseName);
    // Due while the leadership changes hands, and after.
    const due = Object.fromEntries([1, 2, 3, 4].map((i) => [`failover-${i}`, inMs(2000 + i * 1000)]));
    for (const [name, schedule] of Object.entries(due))
      await createAt(admin, work.name, name, { schedule, command: `echo ${name}` });
    for (const name of Object.keys(due)) await waitForPhase(admin, work.name, name, 'PENDING');

    const deletedAt = Date.now();
    assert.ok(
      await resource(admin, PODS).delete({ namespace: system, name: leader }),
      `${leader} was already gone`,
    );
    // Usually the standby; the Deployment's replacement pod may win the race for the released Lease.
    let successor = '';
    await eventually(
      async () => {
        successor = await leaseHolderPod(admin, system, CHART_DEFAULTS.leaseName);
        assert.notEqual(successor, leader);
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const handOverMs = Date.now() - deletedAt;
    const live = await livePods(admin, system, release);
    assert.ok(
      live.some((p) => p.name === successor),
      `${successor} is not a live replica: ${JSON.stringify(live)}`,
    );
    // The stopping leader handed the Lease over instead of letting it expire (lease duration 15 s).
    assert.ok(handOverMs < 15_000, `the Lease changed hands after ${handOverMs} ms`);
    await eventually(
      () => {
        assert.match(run.logs.byPod().get(leader) ?? '', /"message":"released lease"/);
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    for (const [name, schedule] of Object.entries(due)) {
      const at = await waitForPhase(admin, work.name, name, 'DONE');
      assert.equal(at.status?.outcome, 'Succeeded', `${name}: ${JSON.stringify(at.status)}`);
      assertRanOnce(at, schedule, podUids);
    }
    await assertReplicasReady(admin, system, release);
  });

  test('helm upgrade to the next release (--reuse-values --set logLevel=debug) rolls the pods; an At due meanwhile runs once', async () => {
    const oldPods = (await livePods(admin, system, release)).map((p) => p.name);
    const duringSchedule = inMs(4000);
    await createAt(admin, work.name, 'during-upgrade', { schedule: duringSchedule, command: 'echo during' });
    await helm(
      [
        'upgrade',
        release,
        ...releasedChartArgs(readmeInstall('at-scheduler').chart, e2eReleases().next),
        '--namespace',
        system,
        '--reuse-values',
        '--set',
        'logLevel=debug',
        '--wait',
        '--timeout',
        '2m',
      ],
      { kubeconfig: adminKubeconfigPath() },
    );
    await assertReplicasReady(admin, system, release);
    const newPods = await livePods(admin, system, release);
    for (const pod of newPods) {
      assert.ok(!oldPods.includes(pod.name), `${pod.name} was not replaced`);
      const container = controllerContainerOf(
        await resource<PodSpec>(admin, PODS).get({ namespace: system, name: pod.name }),
      );
      assert.equal(container.env?.find((e) => e.name === 'LOG_LEVEL')?.value, 'debug');
      await assertRunsReleasedImage(admin, system, pod.name, 'at-scheduler', e2eReleases().next);
    }
    const during = await waitForPhase(admin, work.name, 'during-upgrade', 'DONE');
    assert.equal(during.status?.outcome, 'Succeeded');
    assertRanOnce(during, duringSchedule, podUids);

    // After the roll: the new leader runs it, and its log shows the new level in effect.
    const afterSchedule = inMs(1000);
    await createAt(admin, work.name, 'after-upgrade', { schedule: afterSchedule, command: 'echo after' });
    const afterAt = await waitForPhase(admin, work.name, 'after-upgrade', 'DONE');
    assert.equal(afterAt.status?.outcome, 'Succeeded');
    assertRanOnce(afterAt, afterSchedule, podUids);
    await assertEventsWritten(admin, work.name, 'after-upgrade');
    const leader = await leaseHolderPod(admin, system, CHART_DEFAULTS.leaseName);
    assert.ok(newPods.some((p) => p.name === leader));
    const debugLines = logLines(await podLog(admin, system, leader, { container: 'controller' })).filter(
      (line) => line.level === 'debug' && line.name === 'after-upgrade',
    );
    assert.ok(debugLines.length > 0, 'no debug line about the At in the new leader log');
  });

  test('helm test passes on the upgraded release', async () => {
    await assertHelmTestPassed(admin, system, release);
  });

  test('Prometheus discovers both replicas through the metrics Service and scrapes them; every dashboard panel has series, the alerts evaluate quietly', async () => {
    await assertObservedByPrometheus({
      chart: 'at-scheduler',
      release,
      admin,
      namespace: system,
      service: `${release}-metrics`,
      replicas: CHART_DEFAULTS.replicas,
      controllers: ['at-scheduler'],
    });
  });

  test("promtool check metrics passes on a replica's /metrics", async () => {
    await assertPromtoolClean(admin, system, release);
  });

  test('helm test fails while no replica runs (scaled to 0), and passes again once they are back', async () => {
    await scaleController(admin, system, release, 0);
    await eventually(
      async () => {
        const running = (await pods(admin, system, controllerPods(release))).filter(
          (p) => p.phase === 'Running',
        );
        assert.deepEqual(running, []);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await assertHelmTestFails(release, system, [
      new RegExp(`^FAILED: Lease ${system}/${CHART_DEFAULTS.leaseName} is held by one of the running pods`),
      /^FAILED: .*metrics/,
    ]);
    await scaleController(admin, system, release, CHART_DEFAULTS.replicas);
    await assertReplicasReady(admin, system, release);
    await leaderAmong(admin, system, CHART_DEFAULTS.leaseName, controllerPods(release));
    // The failed test's Pod (kept for `kubectl logs`) is replaced by this run's, which is deleted when it passes.
    await assertHelmTestPassed(admin, system, release);
  });

  test('helm uninstall leaves nothing but the CRD, the users’ Ats and the controller’s Lease', async () => {
    logsAtUninstall = await assertUninstallLeavesOnlyTheCrd(
      run,
      system,
      [
        ...namespacedObjects(release, system, 'leader-election'),
        ref(CLUSTER_ROLES, release),
        ref(CLUSTER_ROLE_BINDINGS, release),
      ],
      [{ namespace: work.name, name: 'echo' }],
    );
  });

  test('no token in any controller log; nothing refused but the Lease hand-over at uninstall', () => {
    // Two installed, one replacing the deleted leader, two from the upgrade, two scaled up again.
    assertLogsClean(run.logs, logsAtUninstall, sa, 7);
  });
});

describe('at-scheduler on the node, watchNamespaces', () => {
  const run = new Run();
  const { admin, release, system } = run;
  let watched: TestNamespace;
  let other: TestNamespace;
  let installOutput: string;
  let podUids: PodUidWatch;
  let logsAtUninstall: Map<string, string>;
  let sa: ServiceAccountCredentials;

  before(async () => {
    watched = await run.namespace('e2e-at-watched');
    other = await run.namespace('e2e-at-other');
    podUids = await watchPodUids(admin, watched.name, AT_PODS);
    run.onCleanup(() => {
      podUids.stop();
    });
    installOutput = await run.install({ watchNamespaces: [watched.name] });
    sa = await serviceAccountKubeconfig(admin, system, release);
    run.onCleanup(() => sa.remove());
  });
  after(() => run.cleanup());

  test('helm install --wait: Ready replicas, Roles only in the watched namespace, NOTES', async () => {
    assert.match(installOutput, new RegExp(`installed as ${release} in ${system}\\.`));
    assert.match(installOutput, new RegExp(`Watching: ${watched.name}\\.`));
    await assertReplicasReady(admin, system, release);
    assert.equal(await objectExists(admin, ref(CLUSTER_ROLES, release)), false);
    assert.ok(await objectExists(admin, ref(ROLES, release, watched.name)));
    assert.equal(await objectExists(admin, ref(ROLES, release, other.name)), false);
  });

  test('helm test passes: the CRD served, the Lease held by a running replica, /metrics on the Service', async () => {
    await assertHelmTestPassed(admin, system, release);
  });

  test('the controller runs on its in-cluster ServiceAccount token, no kubeconfig', async () => {
    await assertInClusterConfig(admin, system, release, [watched.name]);
  });

  test('least privilege: the ServiceAccount may do exactly the checked-in list', async () => {
    const expected = expectedRules.watchNamespaces;
    await assertEffectiveRules(sa, {
      [system]: expected.releaseNamespace,
      [watched.name]: expected.watchedNamespace,
      [other.name]: expected.otherNamespace,
    });
  });

  test('an At in the watched namespace runs once; one elsewhere is left alone', async () => {
    const schedule = inMs(3000);
    await createAt(admin, watched.name, 'hello', {
      schedule,
      command: 'echo hello from a watched namespace',
    });
    // Due in an hour, not now: an At left due in a namespace being deleted would be a job for any
    // all-namespaces at-scheduler on the cluster (another run's), and then fail in a terminating namespace.
    await createAt(admin, other.name, 'ignored', { schedule: inMs(3_600_000), command: 'echo never' });
    const hello = await waitForPhase(admin, watched.name, 'hello', 'DONE');
    assert.equal(hello.status?.outcome, 'Succeeded');
    assertRanOnce(hello, schedule, podUids);
    await assertEventsWritten(admin, watched.name, 'hello');
    assert.equal(
      await podLog(admin, watched.name, 'hello-pod', { container: 'command' }),
      'hello from a watched namespace\n',
    );
    // Only the CRD's default: nothing of this controller's was written.
    assert.deepEqual((await getAt(admin, other.name, 'ignored')).status, { phase: 'PENDING' });
    assert.deepEqual(await pods(admin, other.name, AT_PODS), []);
  });

  test("promtool check metrics passes on a replica's /metrics", async () => {
    await assertPromtoolClean(admin, system, release);
  });

  test('helm uninstall leaves nothing but the CRD, the users’ Ats and the controller’s Lease', async () => {
    logsAtUninstall = await assertUninstallLeavesOnlyTheCrd(
      run,
      system,
      [
        ...namespacedObjects(release, system, 'leader-election'),
        ref(ROLES, release, watched.name),
        ref(ROLE_BINDINGS, release, watched.name),
      ],
      [
        { namespace: watched.name, name: 'hello' },
        { namespace: other.name, name: 'ignored' },
      ],
    );
  });

  test('no token in any controller log; nothing refused but the Lease hand-over at uninstall', () => {
    assertLogsClean(run.logs, logsAtUninstall, sa, CHART_DEFAULTS.replicas);
  });
});

describe('at-scheduler on the node, sharded (sharding.enabled): every replica active', () => {
  const run = new Run();
  const { admin, release, system } = run;
  const REPLICAS = 3;
  // The chart's lease duration (leaderElection.leaseDuration), which the member Leases use too.
  const LEASE_DURATION_MS = 15_000;
  let work: TestNamespace;
  let podUids: PodUidWatch;
  let logsAtUninstall: Map<string, string>;
  let sa: ServiceAccountCredentials;

  before(async () => {
    work = await run.namespace('e2e-at-sharded');
    podUids = await watchPodUids(admin, work.name, AT_PODS);
    run.onCleanup(() => {
      podUids.stop();
    });
    // Debug logs: each reconcile's `reconciling` line names the replica that reconciled the At.
    await run.install({
      replicaCount: REPLICAS,
      leaderElection: { enabled: false },
      sharding: { enabled: true },
      logLevel: 'debug',
    });
    sa = await serviceAccountKubeconfig(admin, system, release);
    run.onCleanup(() => sa.remove());
  });
  after(() => run.cleanup());

  test('helm install --wait: three replicas Ready, each holding a share of the ring, all 256 buckets held once', async () => {
    await assertReplicasReady(admin, system, release, REPLICAS);
    await ringSettled(admin, system, release, REPLICAS);
  });

  test('helm test passes: every running replica holds a renewed member Lease', async () => {
    await assertHelmTestPassed(admin, system, release, { replicas: REPLICAS });
  });

  test('every replica works: Ats due at once each run once, on the replica holding their bucket, spread over all three', async () => {
    const schedule = inMs(5000);
    const names = Array.from({ length: 30 }, (_, i) => `spread-${i}`);
    for (const name of names) await createAt(admin, work.name, name, { schedule, command: `echo ${name}` });
    for (const name of names) {
      const at = await waitForPhase(admin, work.name, name, 'DONE', 60_000);
      assert.equal(at.status?.outcome, 'Succeeded', `${name}: ${JSON.stringify(at.status)}`);
      assertRanOnce(at, schedule, podUids);
    }
    const logs = run.logs.byPod();
    const byReplica = new Map<string, number>();
    for (const name of names) {
      const reconcilers = reconcilersOf(logs, work.name, name);
      // No hand-off happened meanwhile: one replica reconciled each At, every time.
      assert.equal(reconcilers.length, 1, `${name} reconciled by ${reconcilers.join(', ') || 'no replica'}`);
      const replica = reconcilers[0] ?? '';
      byReplica.set(replica, (byReplica.get(replica) ?? 0) + 1);
    }
    // With 30 Ats and three shares of about a third, one replica gets none with odds of 3 * (2/3)^30.
    assert.equal(byReplica.size, REPLICAS, `Ats per replica: ${JSON.stringify([...byReplica])}`);
  });

  test('Prometheus scrapes the three replicas: their shares sum to 1; every dashboard panel of a sharded release has series, the alerts evaluate quietly', async () => {
    await assertObservedByPrometheus({
      chart: 'at-scheduler',
      release,
      admin,
      namespace: system,
      service: `${release}-metrics`,
      replicas: REPLICAS,
      controllers: ['at-scheduler'],
      sharded: true,
    });
  });

  test('a replica deleted: the others take its share within the lease duration + 1 s; Ats due meanwhile run once', async () => {
    const members = await ringSettled(admin, system, release, REPLICAS);
    const [victim, share] = [...members][0] ?? ['', []];
    // Due just before, during and after the hand-off, one every 500 ms.
    const due = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`handoff-${i}`, inMs(2000 + i * 500)] as const),
    );
    for (const [name, schedule] of Object.entries(due))
      await createAt(admin, work.name, name, { schedule, command: `echo ${name}` });
    const deletedAt = Date.now();
    assert.ok(
      await resource(admin, PODS).delete({ namespace: system, name: victim }),
      `${victim} was already gone`,
    );
    let takenOverMs = 0;
    await eventually(
      async () => {
        const others = await ringMembers(admin, system, release);
        others.delete(victim);
        const held = new Set([...others.values()].flat());
        const waiting = share.filter((bucket) => !held.has(bucket));
        assert.deepEqual(waiting, [], `buckets of ${victim} not taken yet`);
        takenOverMs = Date.now() - deletedAt;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.ok(
      takenOverMs <= LEASE_DURATION_MS + 1000,
      `the share of ${victim} (${share.length} buckets) was taken over after ${takenOverMs} ms`,
    );
    for (const [name, schedule] of Object.entries(due)) {
      const at = await waitForPhase(admin, work.name, name, 'DONE', 60_000);
      assert.equal(at.status?.outcome, 'Succeeded', `${name}: ${JSON.stringify(at.status)}`);
      assertRanOnce(at, schedule, podUids);
      const lateMs = Date.parse(at.status.startTime ?? '') - Date.parse(schedule);
      assert.ok(lateMs <= LEASE_DURATION_MS + 1000, `${name} started ${lateMs} ms after its schedule`);
    }
    // The Deployment's replacement joins the ring and takes a share back.
    await assertReplicasReady(admin, system, release, REPLICAS);
    await ringSettled(admin, system, release, REPLICAS);
  });

  test('helm uninstall leaves nothing but the CRD and the users’ Ats', async () => {
    logsAtUninstall = await assertUninstallLeavesOnlyTheCrd(
      run,
      system,
      [
        ...namespacedObjects(release, system, 'sharding'),
        ref(CLUSTER_ROLES, release),
        ref(CLUSTER_ROLE_BINDINGS, release),
      ],
      [{ namespace: work.name, name: 'spread-0' }],
      { sharded: true },
    );
  });

  test('no token in any controller log; nothing refused but the member Leases at uninstall', () => {
    // Three installed, one replacing the deleted replica.
    assertLogsClean(run.logs, logsAtUninstall, sa, REPLICAS + 1);
  });
});
