/**
 * cloud-node end to end on the real node, as a user runs it: the root README's `helm install` command,
 * read from the README (release `cloud-node` in `kube-system`, the token by `hcloud.token.existingSecret`
 * from HCCM's `hcloud` Secret, which the test creates as the README says the user has it), of the
 * unchanged chart with its defaults (2 replicas, leader election, system-cluster-critical, its
 * tolerations), plus only `--wait` and what this cluster needs (the Hetzner endpoint: the fake of
 * @loopwright/fakes/hcloud on the node bridge, where pods reach it; the Node label selector). The controllers
 * run as pods with their in-cluster ServiceAccount token, Ready through the kubelet's probes; the test
 * registers Nodes with the uninitialized taint, as kubelets with `--cloud-provider=external` do, then
 * deletes the leader, upgrades and uninstalls the release. `helm test` passes after the install and the
 * upgrade.
 *
 * kube-system is the README's namespace, and it is not the test's: nothing deletes it; the release is
 * uninstalled and the test's own objects (the `hcloud` Secret, its Nodes and their Events, its other
 * namespace) are deleted one by one. kube-system enforces no Pod Security profile (it is privileged in
 * real clusters), so the pods' compliance with the restricted profile (no hostNetwork by default,
 * `dnsPolicy: Default` is allowed) is shown by a server-side dry run of the Deployment's pod template in
 * a restricted namespace. The chart puts the Events Role in `default` wherever it is installed.
 *
 * Nodes are cluster-scoped, and cloud-node deletes Nodes whose servers are gone: the install sets
 * `nodeLabelSelector` to this run's label, so the controllers never see the node's own Node
 * (`loopwright-node`) or anyone else's, and the last test checks that the real Node was not touched.
 * The test's Nodes are API objects without a kubelet: they carry a taint nothing tolerates, so no pod
 * (the chart's pods tolerate the taints a fresh Node has, and prefer a Node without a replica) is ever
 * scheduled onto them.
 */
import { helm, loadTestNode } from '@loopwright/cluster';
import { eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { startFakeHcloud, type FakeHcloud, type FakeHcloudServer } from '@loopwright/fakes/hcloud';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '@loopwright/client';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { normalizeRules, repoRoot, type PolicyRule } from './charts.ts';
import {
  adminKubeconfigPath,
  createOrReplaceSecret,
  effectiveRules,
  objectExists,
  resource,
  serviceAccountKubeconfig,
} from './kube.ts';
import {
  assertAdmittedUnderRestricted,
  followPodLogs,
  isLeaseRequestOfUninstall,
  leaderAmong,
  leaseHolderPod,
  podLog,
  pods,
  restrictedNamespace,
  type PodLogs,
} from './node.ts';
import { assertHelmTestPasses, deleteHelmTestLeftovers } from './helm-test.ts';
import { assertObservedByPrometheus } from './observability.ts';
import { promtoolCheckMetrics } from './prometheus.ts';
import { fromRegistry, readmeInstall, readmeSecret, secretData, testOnlyArgs } from './readme-install.ts';
import { assertRunsReleasedImage, e2eReleases, releasedChartArgs } from './release.ts';
import {
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  DEPLOYMENTS,
  describeObject,
  EVENTS,
  LEASES,
  NODES,
  PODS,
  PRIORITY_CLASSES,
  ref,
  REPLICA_SETS,
  ROLE_BINDINGS,
  ROLES,
  SECRETS,
  SERVICE_ACCOUNTS,
  SERVICES,
} from './resources.ts';
import { kubeletlessNode, UNINITIALIZED_TAINT } from './kubeletless-node.ts';

const expectedRules = JSON.parse(
  await readFile(new URL('../expected/cloud-node.effective-rules.json', import.meta.url), 'utf8'),
) as Record<'releaseNamespace' | 'defaultNamespace' | 'otherNamespace' | 'nonResource', PolicyRule[]>;

/** On every test Node: nothing tolerates it, so no pod lands on a Node that has no kubelet. */
const NO_KUBELET_TAINT: Taint = { key: 'loopwright.dev/e2e-no-kubelet', value: 'true', effect: 'NoSchedule' };
const RUN_LABEL = 'loopwright.dev/e2e-cloud-node';
const NETWORK = 'e2e-k8s';
/** The chart's `leaderElection.leaseName` default. */
const LEASE = 'cloud-node';
const REPORTING_CONTROLLER = 'loopwright.dev/cloud-node';
/** The chart's `metricsPort` default: /metrics on every replica's pod IP. */
const METRICS_PORT = 8080;
/** A ServiceAccount token (any JWT): none may appear in a log line. */
const JWT = /eyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]+/;

interface Taint {
  key: string;
  value?: string;
  effect: string;
}

interface Node extends KubeObject {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { providerID?: string; taints?: Taint[] };
  status?: { addresses?: { type: string; address: string }[] };
}

interface EventsV1 extends KubeObject {
  metadata: { name: string };
  reason: string;
  type: string;
  reportingController?: string;
  reportingInstance?: string;
  series?: { count: number };
  regarding: { kind: string; name: string };
}

interface Pod extends KubeObject {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
  spec: {
    nodeName?: string;
    priority?: number;
    priorityClassName?: string;
    serviceAccountName?: string;
    tolerations?: { key?: string; operator?: string; value?: string; effect?: string }[];
    containers: { name: string; env?: { name: string; value?: string }[] }[];
  };
}

interface Lease extends KubeObject {
  metadata: { labels?: Record<string, string> };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    leaseTransitions?: number;
    renewTime?: string;
  };
}

/** One of the test's servers and the Node registered for it. */
interface Machine {
  server: FakeHcloudServer;
  internalIp: string;
}

describe('cloud-node on the node: helm install, Nodes initialised, failover, upgrade, uninstall', () => {
  const run = randomBytes(3).toString('hex');
  // A Hetzner token is 64 alphanumerics; a fresh one, so finding it in a log means it leaked.
  const hcloudToken = randomBytes(32).toString('hex');
  /** The README's command: its release and namespace (kube-system) are what this suite installs. */
  const readme = fromRegistry(readmeInstall('cloud-node'), e2eReleases().registry);
  const { release } = readme;
  /** The chart's fullname: the release's, since the release is named like the chart. */
  const fullname = release;
  /** HCCM's Secret, as the README creates it (`kubectl create secret`) and the install takes it. */
  const hcloudSecret = readmeSecret('cloud-node');
  const podSelector = `app.kubernetes.io/instance=${release},app.kubernetes.io/name=cloud-node`;
  const { nodeName: realNodeName, hostAddress } = loadTestNode();
  let admin: KubeConfig;
  /** kube-system: `namespace.name` reads as it did when the suite had a namespace of its own. */
  const namespace = { name: readme.namespace };
  /** A namespace of the test's own: restricted, for the least-privilege check and the dry run. */
  let other: TestNamespace;
  let fake: FakeHcloud;
  let networkId: number;
  let installOutput = '';
  let realNodeBefore: Node;
  /** Every controller pod's log, from its start to its exit (failover, roll and uninstall included). */
  let podLogs: PodLogs;
  /** The Nodes this run registered: removed with the Events about them at the end. */
  const testNodes: string[] = [];

  // Undone in reverse order, whatever `before` got to (a failed install must not leak anything).
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse())
      await Promise.resolve()
        .then(cleanup)
        .catch(() => undefined);
  });
  const helmAsAdmin = (args: string[]) =>
    helm(args, { kubeconfig: adminKubeconfigPath(), timeoutMs: 150_000 });

  /**
   * The README's command word for word (run from the repository root) plus `--wait`, the fake's
   * endpoint and the run's Node label selector; NOTES.txt.
   */
  async function install(): Promise<string> {
    const values = { 'hcloud.endpoint': fake.url, nodeLabelSelector: `${RUN_LABEL}=${run}` };
    const { stdout } = await helm([...readme.args, ...testOnlyArgs(readme, { timeout: '2m', values })], {
      kubeconfig: adminKubeconfigPath(),
      cwd: repoRoot,
      timeoutMs: 150_000,
    });
    return stdout;
  }

  /** Adds a server to the fake project (named like the Node to come) and registers its Node. */
  async function registerMachine(
    suffix: string,
    type: string,
    location: string,
    internalIp: string,
  ): Promise<Machine> {
    const name = `e2e-cn-${run}-${suffix}`;
    const server = fake.servers.add({
      name,
      server_type: type,
      location,
      private_net: [{ network: networkId, ip: internalIp, alias_ips: [], mac_address: '86:00:00:00:00:01' }],
    });
    testNodes.push(name);
    await registerUninitialisedNode(admin, name, { [RUN_LABEL]: run });
    return { server, internalIp };
  }

  before(async () => {
    admin = loadTestKubeConfig();
    realNodeBefore = await resource<Node>(admin, NODES).get({ name: realNodeName });
    other = await restrictedNamespace(admin, 'e2e-cn-other');
    cleanups.push(() => other.cleanup());
    fake = await startFakeHcloud({ token: hcloudToken, host: hostAddress });
    cleanups.push(() => fake.close());
    cleanups.push(() => deleteNodesAndTheirEvents(admin, testNodes));
    // The controller resolves HCLOUD_NETWORK at start (and exits if the project has no such network).
    networkId = fake.networks.add({ name: NETWORK, ip_range: '10.0.0.0/16' }).id;
    // The Secret the user has, HCCM's `hcloud` Secret as it is; the chart only references it.
    await createOrReplaceSecret(
      admin,
      hcloudSecret.namespace,
      hcloudSecret.name,
      secretData(hcloudSecret, { HCLOUD_TOKEN: hcloudToken, HCLOUD_NETWORK: NETWORK }),
    );
    cleanups.push(() => resource(admin, SECRETS).delete(hcloudSecret));
    // A failed helm test's Pod, which helm uninstall leaves (after it, as cleanups run in reverse).
    cleanups.push(() => deleteHelmTestLeftovers(admin, namespace.name, fullname));
    // --wait: nothing of the release is left running when the suite ends.
    cleanups.push(() =>
      helmAsAdmin([
        'uninstall',
        release,
        '--namespace',
        namespace.name,
        '--ignore-not-found',
        '--wait',
        '--timeout',
        '2m',
      ]),
    );
    installOutput = await install().catch(async (error: unknown) => {
      const state = await pods(admin, namespace.name, podSelector).catch(() => []);
      throw new Error(`helm install failed; the pods: ${JSON.stringify(state)}`, { cause: error });
    });
    podLogs = followPodLogs(admin, namespace.name, podSelector, 'controller');
    cleanups.push(() => {
      podLogs.stop();
    });
    // A replica of this install leads before the tests start (a Lease left in kube-system by an earlier
    // install lapses first, as client-go sees it).
    await leaderAmong(admin, namespace.name, LEASE, podSelector);
  });

  test('helm install --wait: deployed, NOTES.txt, both replicas Ready through the kubelet; the pods comply with restricted', async () => {
    const { stdout } = await helmAsAdmin([
      'status',
      release,
      '--namespace',
      namespace.name,
      '--output',
      'json',
    ]);
    assert.equal((JSON.parse(stdout) as { info: { status: string } }).info.status, 'deployed');
    assert.match(installOutput, new RegExp(`installed as\\s+${fullname} in ${namespace.name}\\.`));
    assert.match(installOutput, new RegExp(`Nodes: ${RUN_LABEL}=${run}\\.`));
    assert.match(
      installOutput,
      new RegExp(`token: Secret ${hcloudSecret.namespace}/${hcloudSecret.name}, key token\\.`),
    );
    assert.match(
      installOutput,
      new RegExp(`Leader election: on \\(Lease ${namespace.name}/${LEASE}, 2 replicas\\)`),
    );
    const replicas = await pods(admin, namespace.name, podSelector);
    assert.equal(replicas.length, 2, JSON.stringify(replicas));
    for (const replica of replicas) {
      assert.ok(replica.ready && replica.phase === 'Running', JSON.stringify(replica));
      assert.equal(replica.restarts, 0, `${replica.name} restarted`);
      // The README's release, pulled by containerd from the registry the release was pushed to.
      await assertRunsReleasedImage(admin, namespace.name, replica.name, 'cloud-node', e2eReleases().current);
    }
    // kube-system enforces nothing; a namespace that enforces the restricted profile would admit them.
    const { spec } = await resource<
      KubeObject & { spec: { template: Parameters<typeof assertAdmittedUnderRestricted>[2] } }
    >(admin, DEPLOYMENTS).get({ namespace: namespace.name, name: fullname });
    await assertAdmittedUnderRestricted(admin, other.name, spec.template);
  });

  /** `helm test`: the chart has no CRDs; a running replica holds the Lease, /metrics answers on the Service. */
  const assertHelmTestPassed = () =>
    assertHelmTestPasses(admin, release, namespace.name, { chart: 'cloud-node', fullname, lease: LEASE });

  test('helm test passes: the Lease held by a running replica, /metrics on the metrics Service', async () => {
    await assertHelmTestPassed();
  });

  test('the pods run on the node with system-cluster-critical and their own ServiceAccount token', async () => {
    // kube-apiserver creates the PriorityClass at start-up, as in every cluster; Priority admission
    // resolved it for the pods.
    const priorityClass = await resource<KubeObject & { value: number }>(admin, PRIORITY_CLASSES).get({
      name: 'system-cluster-critical',
    });
    for (const pod of await chartPods(admin, namespace.name, podSelector)) {
      assert.equal(pod.spec.nodeName, realNodeName);
      assert.equal(pod.spec.priorityClassName, 'system-cluster-critical');
      assert.equal(pod.spec.priority, priorityClass.value);
      assert.equal(pod.spec.serviceAccountName, fullname);
      // The controller found the mounted ServiceAccount token (no kubeconfig in the image or env).
      const records = logRecords(await podLog(admin, namespace.name, pod.metadata.name));
      const started = records.find((r) => r.message === 'target cluster');
      assert.deepEqual(started?.source, {
        kind: 'in-cluster',
        paths: ['/var/run/secrets/kubernetes.io/serviceaccount'],
      });
      // The chart's node selector reached the controller: it touches only this run's Nodes.
      const hetzner = records.find((r) => r.message === 'Hetzner Cloud');
      assert.equal(hetzner?.nodes, `${RUN_LABEL}=${run}`);
    }
    // One replica leads: it holds the chart's Lease.
    const holder = await leaseHolderPod(admin, namespace.name, LEASE);
    assert.ok(
      (await pods(admin, namespace.name, podSelector)).some((p) => p.name === holder),
      holder,
    );
  });

  test("the chart's tolerations let its pod onto a fresh Node (uninitialized, not Ready), as in a new cluster", async () => {
    // The node's own Node has none of these taints, so the chart's pods prove nothing about them there.
    // A Node registered as a new cloud Node is (outside the run's label: cloud-node leaves it tainted),
    // and a pod of the Deployment's own template pinned to it: the scheduler binds it only if the
    // template tolerates every taint the Node has. It never runs (no kubelet) and is removed at once.
    const name = `e2e-cn-${run}-fresh`;
    testNodes.push(name);
    await registerUninitialisedNode(admin, name, {});
    const probe = await createSchedulingProbe(admin, namespace.name, fullname, name);
    try {
      await eventually(
        async () => {
          const pod = await resource<Pod>(admin, PODS).get({ namespace: namespace.name, name: probe });
          assert.equal(pod.spec.nodeName, name, JSON.stringify(pod.status));
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      const node = await resource<Node>(admin, NODES).get({ name });
      const taints = (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
      for (const taint of [`${UNINITIALIZED_TAINT}:NoSchedule`, 'node.kubernetes.io/not-ready:NoSchedule'])
        assert.ok(taints.includes(taint), `the Node lacks ${taint}: ${taints.join(' ')}`);
    } finally {
      // At once (no kubelet will ever confirm a graceful deletion).
      await resource(admin, PODS).delete(
        { namespace: namespace.name, name: probe },
        { gracePeriodSeconds: 0 },
      );
    }
    assert.equal(await objectExists(admin, ref(PODS, probe, namespace.name)), false);
  });

  let first: Machine;
  let firstLeader: string;

  test('a Node with the uninitialized taint gets providerID, labels, addresses, and loses the taint', async () => {
    firstLeader = await leaseHolderPod(admin, namespace.name, LEASE);
    first = await registerMachine('a', 'cpx31', 'fsn1', '10.0.0.7');
    await assertInitialised(admin, first, {
      'node.kubernetes.io/instance-type': 'cpx31',
      'topology.kubernetes.io/region': 'fsn1',
      'topology.kubernetes.io/zone': 'fsn1-dc14',
    });
    // The Event about the Node is in `default` (the chart's Role there), written by the leader.
    await eventually(async () => {
      assert.deepEqual(await cloudNodeEvents(admin, first.server.name), [`Normal Synced by ${firstLeader}`]);
    });
    // Every Hetzner request carried the Secret's token (none was refused).
    assert.ok(fake.requests.count() > 0);
    assert.equal(fake.requests.count({ status: 401 }), 0);
  });

  test('least privilege: the ServiceAccount may do exactly the checked-in list', async () => {
    const sa = await serviceAccountKubeconfig(admin, namespace.name, fullname);
    try {
      const rulesIn = async (ns: string) => {
        const review = await effectiveRules(sa.kubeConfig, ns);
        assert.equal(review.incomplete, false);
        assert.deepEqual(review.nonResourceRules, normalizeRules(expectedRules.nonResource));
        return review.resourceRules;
      };
      assert.deepEqual(await rulesIn(namespace.name), normalizeRules(expectedRules.releaseNamespace));
      assert.deepEqual(await rulesIn('default'), normalizeRules(expectedRules.defaultNamespace));
      assert.deepEqual(await rulesIn(other.name), normalizeRules(expectedRules.otherNamespace));
    } finally {
      await sa.remove();
    }
  });

  test('/metrics at each pod IP: promtool finds nothing; Hetzner requests by api_endpoint, only the leader looks up servers', async () => {
    const leader = await leaseHolderPod(admin, namespace.name, LEASE);
    for (const replica of await pods(admin, namespace.name, podSelector)) {
      assert.ok(replica.ip, `${replica.name} has no IP`);
      const url = `http://${replica.ip}:${METRICS_PORT}/metrics`;
      const result = await promtoolCheckMetrics(url);
      assert.equal(result.findings, '', replica.name);
      assert.equal(result.exitCode, 0);
      const requests = hcloudRequests(await (await fetch(url)).text());
      // Every replica checks the token once at start (and resolves the network)...
      assert.equal(requests.count('/locations', '200'), 1, `${replica.name}: the start-up token check`);
      assert.equal(requests.count('/networks', '200'), 1, `${replica.name}: HCLOUD_NETWORK resolved`);
      // ...but only the leader runs the controllers: the standby costs no API budget (README).
      const lookups = requests.count('/servers', '200') + requests.count('/servers/-', '200');
      if (replica.name === leader) assert.ok(lookups >= 1, 'the leader looked the server up');
      else assert.equal(requests.total, 2, `the standby made more API requests: ${requests.text}`);
      const remaining = Number(requests.remaining);
      assert.ok(remaining > 3000 && remaining < 3600, `hcloud_ratelimit_remaining ${requests.remaining}`);
    }
  });

  test('Prometheus discovers both replicas through the metrics Service and scrapes them at their pod IPs; every dashboard panel has series, the alerts evaluate quietly', async () => {
    await assertObservedByPrometheus({
      chart: 'cloud-node',
      release,
      admin,
      namespace: namespace.name,
      service: `${fullname}-metrics`,
      replicas: 2,
      controllers: ['cloud-node', 'cloud-node-lifecycle'],
    });
  });

  test('failover: the leader pod deleted, another replica takes the Lease and initialises the next Node', async (t) => {
    const leader = await leaseHolderPod(admin, namespace.name, LEASE);
    const standby = (await pods(admin, namespace.name, podSelector)).find((p) => p.name !== leader)?.name;
    const transitions = (await lease(admin, namespace.name)).spec.leaseTransitions ?? 0;
    assert.ok(
      await resource(admin, PODS).delete({ namespace: namespace.name, name: leader }),
      `${leader} was already gone`,
    );
    // The leader releases the Lease on SIGTERM, so another replica takes over at once, not after the
    // 15 s lease duration: the standby at its next attempt (every 2 s plus jitter), or the pod replacing
    // the deleted one if that starts first (both happen here; the race is Kubernetes', not a fault).
    await eventually(
      () => {
        const text = podLogs.byPod().get(leader) ?? '';
        assert.ok(
          logRecords(text).some((r) => r.message === 'released lease'),
          `the leader did not release the Lease:\n${text}`,
        );
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    let successor = '';
    await eventually(
      async () => {
        successor = (await lease(admin, namespace.name)).spec.holderIdentity ?? '';
        assert.ok(successor !== '' && successor !== leader, `the Lease is held by "${successor}"`);
      },
      { timeoutMs: 6_000, intervalMs: 200 },
    );
    assert.ok(
      (await pods(admin, namespace.name, podSelector)).some((p) => p.name === successor && !p.deleting),
      `${successor} is not a running replica`,
    );
    assert.equal((await lease(admin, namespace.name)).spec.leaseTransitions, transitions + 1);
    t.diagnostic(
      `taken over by ${successor === standby ? 'the standby' : 'the replacement pod'} ${successor}`,
    );

    const second = await registerMachine('b', 'cx22', 'hel1', '10.0.0.8');
    await assertInitialised(admin, second, {
      'node.kubernetes.io/instance-type': 'cx22',
      'topology.kubernetes.io/region': 'hel1',
      'topology.kubernetes.io/zone': 'hel1-dc2',
    });
    // One Synced Event per initialisation, each by the replica that led at the time: the new leader
    // re-read the first Node (already initialised) without writing it or an Event about it again.
    await eventually(async () => {
      assert.deepEqual(await cloudNodeEvents(admin, second.server.name), [`Normal Synced by ${successor}`]);
    });
    assert.deepEqual(await cloudNodeEvents(admin, first.server.name), [`Normal Synced by ${firstLeader}`]);
    await assertInitialised(admin, first, {
      'node.kubernetes.io/instance-type': 'cpx31',
      'topology.kubernetes.io/region': 'fsn1',
      'topology.kubernetes.io/zone': 'fsn1-dc14',
    });
  });

  test('helm upgrade --reuse-values with a new log level rolls both pods; the new ones initialise a Node', async () => {
    // The Deployment replaced the deleted pod: two Ready replicas before the roll.
    await eventually(
      async () => {
        const replicas = await pods(admin, namespace.name, podSelector);
        assert.deepEqual(
          replicas.map((p) => p.ready && !p.deleting),
          [true, true],
          JSON.stringify(replicas),
        );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const old = (await pods(admin, namespace.name, podSelector)).map((p) => p.name);
    await helmAsAdmin([
      'upgrade',
      release,
      ...releasedChartArgs(readmeInstall('cloud-node').chart, e2eReleases().next),
      '--namespace',
      namespace.name,
      '--reuse-values',
      '--set',
      'logLevel=debug',
      '--wait',
      '--timeout',
      '2m',
    ]);
    for (const pod of old)
      assert.ok(
        !logRecords(podLogs.byPod().get(pod) ?? '').some((r) => r.level === 'debug'),
        `${pod} logged at debug before the upgrade`,
      );
    await eventually(
      async () => {
        const replicas = await pods(admin, namespace.name, podSelector);
        assert.equal(replicas.length, 2, JSON.stringify(replicas));
        for (const replica of replicas) {
          assert.ok(!old.includes(replica.name), `${replica.name} was not replaced`);
          assert.ok(replica.ready, `${replica.name} is not Ready`);
        }
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    for (const pod of await chartPods(admin, namespace.name, podSelector)) {
      const env = pod.spec.containers.find((c) => c.name === 'controller')?.env ?? [];
      assert.equal(env.find((e) => e.name === 'LOG_LEVEL')?.value, 'debug');
      // --reuse-values kept the install's values.
      assert.equal(env.find((e) => e.name === 'HCLOUD_ENDPOINT')?.value, fake.url);
      assert.equal(env.find((e) => e.name === 'NODE_SELECTOR')?.value, `${RUN_LABEL}=${run}`);
      await assertRunsReleasedImage(
        admin,
        namespace.name,
        pod.metadata.name,
        'cloud-node',
        e2eReleases().next,
      );
    }
    let leader = '';
    await eventually(async () => {
      leader = await leaseHolderPod(admin, namespace.name, LEASE);
      assert.ok(!old.includes(leader), `the Lease is still held by ${leader}`);
    });

    const third = await registerMachine('c', 'cax11', 'nbg1', '10.0.0.9');
    await assertInitialised(admin, third, {
      'node.kubernetes.io/instance-type': 'cax11',
      'topology.kubernetes.io/region': 'nbg1',
      'topology.kubernetes.io/zone': 'nbg1-dc3',
    });
    await eventually(async () => {
      assert.deepEqual(await cloudNodeEvents(admin, third.server.name), [`Normal Synced by ${leader}`]);
    });
    // The new level is in force.
    assert.ok(logRecords(await podLog(admin, namespace.name, leader)).some((r) => r.level === 'debug'));
  });

  test('helm test passes on the upgraded release', async () => {
    await assertHelmTestPassed();
  });

  test('no 403 and no token (ServiceAccount or Hetzner) in any controller pod log, install to roll', () => {
    const logs = podLogs.byPod();
    // The install's two pods (complete: deleted as leader, replaced by the roll), the one replacing the
    // deleted leader (complete) and the upgrade's two (so far).
    assert.equal(logs.size, 5, [...logs.keys()].join(' '));
    for (const [pod, text] of logs) assertCleanLog(pod, text, hcloudToken);
  });

  test('helm uninstall removes every object of the release; the Lease it leaves lapses, a re-install leads', async () => {
    const ns = namespace.name;
    const logsBefore = podLogs.byPod();
    await helmAsAdmin(['uninstall', release, '--namespace', ns, '--wait', '--timeout', '2m']);
    for (const object of [
      ref(DEPLOYMENTS, fullname, ns),
      ref(SERVICE_ACCOUNTS, fullname, ns),
      ref(SERVICES, `${fullname}-metrics`, ns),
      ref(CLUSTER_ROLES, fullname),
      ref(CLUSTER_ROLE_BINDINGS, fullname),
      ref(ROLES, `${fullname}-events`, 'default'),
      ref(ROLE_BINDINGS, `${fullname}-events`, 'default'),
      ref(ROLES, `${fullname}-pod-events`, ns),
      ref(ROLE_BINDINGS, `${fullname}-pod-events`, ns),
      ref(ROLES, `${fullname}-leader-election`, ns),
      ref(ROLE_BINDINGS, `${fullname}-leader-election`, ns),
    ])
      assert.equal(await objectExists(admin, object), false, `${describeObject(object)} is left`);
    // The release record too (no history kept), and the pods with their ReplicaSets (garbage-collected).
    await assert.rejects(helmAsAdmin(['status', release, '--namespace', ns]), /not found/);
    const records = await resource(admin, SECRETS).list({
      namespace: ns,
      labelSelector: `owner=helm,name=${release}`,
    });
    assert.deepEqual(records.items, []);
    await eventually(
      async () => {
        assert.deepEqual(await pods(admin, ns, podSelector), []);
        const replicaSets = await resource(admin, REPLICA_SETS).list({
          namespace: ns,
          labelSelector: podSelector,
        });
        assert.deepEqual(replicaSets.items, []);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const podsGoneAt = Date.now();
    // helm deletes the Roles while the pods are still stopping: their Lease requests (the leader's
    // release, a standby's try) may be refused. Those are the only requests that may be; no token shows.
    for (const [pod, text] of podLogs.byPod()) {
      const shutdown = text.slice(logsBefore.get(pod)?.length ?? 0);
      assert.ok(!shutdown.includes(hcloudToken), `${pod}: the Hetzner Cloud token is in the log`);
      assert.doesNotMatch(shutdown, JWT, `${pod}: a ServiceAccount token is in the log`);
      for (const record of logRecords(shutdown).filter((r) => /\b403\b|forbidden/i.test(JSON.stringify(r))))
        assert.ok(isLeaseRequestOfUninstall(record), JSON.stringify(record));
    }
    // The Lease is the controller's, not the chart's (it carries no release label): helm leaves it in
    // kube-system (the chart README says how to remove it). It is released, or held by a pod that is
    // gone (client-go's identity is `<pod>_<uuid>`), and nothing renews it: it lapses within one lease
    // duration.
    const left = await lease(admin, ns);
    assert.equal(left.metadata.labels?.['app.kubernetes.io/instance'], undefined);
    const holderPod = (left.spec.holderIdentity ?? '').split('_')[0] ?? '';
    if (holderPod !== '') assert.equal(await objectExists(admin, ref(PODS, holderPod, ns)), false);
    assert.ok(Date.parse(left.spec.renewTime ?? '') <= podsGoneAt, JSON.stringify(left.spec));
    // What matters to a user: installing again (same release, same namespace) works, and leads.
    await install();
    await eventually(
      async () => {
        const leader = await leaseHolderPod(admin, ns, LEASE);
        const replicas = await pods(admin, ns, podSelector);
        assert.ok(
          replicas.some((p) => p.name === leader && p.ready),
          `${leader} is not a replica of the new install`,
        );
      },
      { timeoutMs: ((left.spec.leaseDurationSeconds ?? 15) + 10) * 1000, intervalMs: 500 },
    );
    await helmAsAdmin(['uninstall', release, '--namespace', ns, '--wait', '--timeout', '2m']);
  });

  test(`the node's own Node (${realNodeName}) was not touched`, async () => {
    const now = await resource<Node>(admin, NODES).get({ name: realNodeName });
    assert.equal(now.spec?.providerID, undefined);
    assert.deepEqual(now.metadata.labels, realNodeBefore.metadata.labels);
    assert.deepEqual(now.spec?.taints, realNodeBefore.spec?.taints);
    assert.deepEqual(await cloudNodeEvents(admin, realNodeName), []);
  });

  /** Waits until the controller has initialised the machine's Node as the README says. */
  async function assertInitialised(
    kc: KubeConfig,
    machine: Machine,
    placement: Record<
      'node.kubernetes.io/instance-type' | 'topology.kubernetes.io/region' | 'topology.kubernetes.io/zone',
      string
    >,
  ): Promise<void> {
    const { server, internalIp } = machine;
    const publicIpv4 = server.public_net.ipv4?.ip;
    assert.ok(publicIpv4);
    await eventually(
      async () => {
        const node = await resource<Node>(kc, NODES).get({ name: server.name });
        assert.equal(node.spec?.providerID, `hcloud://${server.id}`);
        // Only the uninitialized taint is removed; Kubernetes' own node.kubernetes.io/* taints (not-ready,
        // unreachable: these Nodes have no kubelet) are not the controller's to judge.
        assert.deepEqual(
          (node.spec.taints ?? []).filter((t) => !t.key.startsWith('node.kubernetes.io/')),
          [NO_KUBELET_TAINT],
        );
        assert.deepEqual(node.metadata.labels, {
          [RUN_LABEL]: run,
          ...placement,
          'beta.kubernetes.io/instance-type': placement['node.kubernetes.io/instance-type'],
          'failure-domain.beta.kubernetes.io/region': placement['topology.kubernetes.io/region'],
          'failure-domain.beta.kubernetes.io/zone': placement['topology.kubernetes.io/zone'],
          'instance.hetzner.cloud/provided-by': 'cloud',
        });
        // ipv4 (the chart's default family) and the InternalIP in HCLOUD_NETWORK, from the Secret.
        assert.deepEqual(node.status?.addresses, [
          { type: 'Hostname', address: server.name },
          { type: 'ExternalIP', address: publicIpv4 },
          { type: 'InternalIP', address: internalIp },
        ]);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  }
});

/** A Node as a kubelet with `--cloud-provider=external` registers it (API object only: no kubelet). */
async function registerUninitialisedNode(
  admin: KubeConfig,
  name: string,
  labels: Record<string, string>,
): Promise<void> {
  await resource<KubeObject & { spec: object; status: object }>(admin, NODES).create(
    kubeletlessNode(name, labels, NO_KUBELET_TAINT),
  );
}

/**
 * A pod of the chart's Deployment template (read back from the API server) that must be scheduled onto
 * `node`: required node affinity to it, the template's tolerations plus only the test's no-kubelet one,
 * labels of its own (the ReplicaSet must not adopt it). Returns its name.
 */
async function createSchedulingProbe(
  admin: KubeConfig,
  namespace: string,
  deployment: string,
  node: string,
): Promise<string> {
  const { spec } = await resource<
    KubeObject & { spec: { template: { spec: Pod['spec'] & Record<string, unknown> } } }
  >(admin, DEPLOYMENTS).get({ namespace, name: deployment });
  const name = `${deployment}-scheduling-probe`;
  const template = spec.template.spec;
  await resource<KubeObject & { spec: object }>(admin, PODS).create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels: { 'loopwright.dev/e2e-probe': 'scheduling' } },
    spec: {
      ...template,
      tolerations: [...(template.tolerations ?? []), { ...NO_KUBELET_TAINT, operator: 'Equal' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
          },
        },
      },
    },
  });
  return name;
}

/** The chart's pods with their specs (not yet deleting). */
async function chartPods(admin: KubeConfig, namespace: string, selector: string): Promise<Pod[]> {
  const list = await resource<Pod>(admin, PODS).list({ namespace, labelSelector: selector });
  return list.items.filter((pod) => pod.metadata.deletionTimestamp === undefined);
}

async function lease(admin: KubeConfig, namespace: string): Promise<Lease> {
  return resource<Lease>(admin, LEASES).get({ namespace, name: LEASE });
}

/** cloud-node's Events about a Node, as `<type> <reason> by <replica>` (a repeated one with its count). */
async function cloudNodeEvents(admin: KubeConfig, node: string): Promise<string[]> {
  return (await eventsAbout(admin, node))
    .filter((e) => e.reportingController === REPORTING_CONTROLLER)
    .map(
      (e) => `${e.type} ${e.reason} by ${e.reportingInstance ?? '?'}${e.series ? ` x${e.series.count}` : ''}`,
    );
}

/** Events about a (cluster-scoped) Node: in `default`, where recorders write them. */
async function eventsAbout(admin: KubeConfig, node: string): Promise<EventsV1[]> {
  const events = await resource<EventsV1>(admin, EVENTS).list({
    namespace: 'default',
    fieldSelector: `regarding.name=${node}`,
  });
  return events.items.filter((e) => e.regarding.kind === 'Node' && e.regarding.name === node);
}

/** Nodes are cluster-scoped and Events about them sit in `default`: neither goes with a namespace. */
async function deleteNodesAndTheirEvents(admin: KubeConfig, names: readonly string[]): Promise<void> {
  // `delete` resolves false for a Node that is gone.
  for (const name of names) await resource(admin, NODES).delete({ name });
  // kube-controller-manager records `RemovingNode` once it notices a deletion (its node monitor
  // period, 5 s): wait for it, so that Event goes too.
  await eventually(
    async () => {
      for (const name of names)
        assert.ok(
          (await eventsAbout(admin, name)).some((e) => e.reason === 'RemovingNode'),
          name,
        );
    },
    { timeoutMs: 15_000, intervalMs: 500 },
  ).catch(() => undefined);
  for (const name of names)
    for (const event of await eventsAbout(admin, name))
      await resource(admin, EVENTS)
        .delete({ namespace: 'default', name: event.metadata.name })
        .catch(() => undefined);
}

/** The JSON log lines of a controller (LOG_FORMAT json, the chart's default). */
function logRecords(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function assertCleanLog(pod: string, text: string, hcloudToken: string): void {
  assert.ok(text.length > 0, `${pod}: empty log`);
  assert.doesNotMatch(text, /\b403\b|forbidden/i, `${pod} was refused something`);
  assert.ok(!text.includes(hcloudToken), `${pod}: the Hetzner Cloud token is in the log`);
  assert.doesNotMatch(text, JWT, `${pod}: a ServiceAccount token is in the log`);
}

/** `hcloud_api_requests_total` samples of one /metrics text, and `hcloud_ratelimit_remaining`. */
function hcloudRequests(text: string) {
  const samples = text
    .split('\n')
    .filter((line) => line.startsWith('hcloud_api_requests_total{'))
    .map((line) => ({
      endpoint: /[{,]api_endpoint="([^"]*)"/.exec(line)?.[1],
      code: /code="([^"]*)"/.exec(line)?.[1],
      value: Number(line.split(' ').at(-1)),
    }));
  return {
    text: samples.map((s) => `${s.endpoint ?? ''} ${s.code ?? ''} ${s.value}`).join(', '),
    total: samples.reduce((sum, s) => sum + s.value, 0),
    count: (endpoint: string, code: string) =>
      samples.find((s) => s.endpoint === endpoint && s.code === code)?.value ?? 0,
    remaining: /^hcloud_ratelimit_remaining (\S+)$/m.exec(text)?.[1],
  };
}
