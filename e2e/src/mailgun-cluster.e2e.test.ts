/**
 * mailgun-cluster end to end on the real node, as a user runs it: the root README's `helm install`
 * command, read from the README (release `mailgun-cluster` in `loopwright`, the required values, the key
 * in the user's Secret `mailgun`), plus only `--wait` and the Mailgun URL, of the unchanged chart (its
 * defaults, 2 replicas) into the namespace made to enforce the restricted Pod Security profile first,
 * with the Secret the README says the user creates; the controller pods become Ready through the
 * kubelet's probes and talk to the API server with their own ServiceAccount token, and to the Mailgun
 * peer of `@loopwright/fakes/mailgun` (Mailgun's own mock behind an API-faithful front) on the node's bridge
 * address. Beside it Cluster API itself: its CRDs, webhooks and core manager (`startClusterApi`, on this
 * host, reconciling the test's namespace), which owns the MailgunClusters of the Clusters the test
 * creates, reports them provisioned and deletes them. Then failover, a rolling upgrade and the
 * uninstall; `helm test` passes after the install and the upgrade (Cluster API's CRDs are there before
 * the install, whose chart requires cluster.x-k8s.io/v1beta2).
 */
import {
  helm,
  loadTestNode,
  prepareClusterctlManagement,
  startClusterApi,
  type ClusterApi,
} from '@loopwright/cluster';
import {
  createTestNamespace,
  ensureTestTools,
  eventually,
  loadTestKubeConfig,
  type TestNamespace,
} from '@loopwright/envtest';
import { startMailgunPeer, type MailgunPeer } from '@loopwright/fakes/mailgun';
import type { KubeConfig } from '@kubernetes/client-node';
import { resourceName, type KubeObject, type ListOptions, type ResourceType } from '@loopwright/client';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { normalizeRules, repoRoot, type PolicyRule } from './charts.ts';
import {
  adminKubeconfigPath,
  createOrReplaceSecret,
  effectiveRules,
  objectExists,
  resource,
  serviceAccountKubeconfig,
  type ServiceAccountCredentials,
} from './kube.ts';
import {
  enforceRestricted,
  followPodLogs,
  leaderAmong,
  leaseHolderPod,
  pods,
  type PodLogs,
  type PodSummary,
} from './node.ts';
import { assertHelmTestPasses, deleteHelmTestLeftovers } from './helm-test.ts';
import { assertObservedByPrometheus } from './observability.ts';
import { promtoolCheckMetrics } from './prometheus.ts';
import { fromRegistry, readmeInstall, readmeSecret, secretData, testOnlyArgs } from './readme-install.ts';
import { assertRunsReleasedImage, e2eReleases, publishedRelease, releasedChartArgs } from './release.ts';
import {
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  CLUSTERCTL_PROVIDERS,
  CLUSTERS,
  CUSTOM_RESOURCE_DEFINITIONS,
  DEPLOYMENTS,
  ENDPOINT_SLICES,
  LEASES,
  MAILGUN_CLUSTERS,
  NAMESPACES,
  PODS,
  ref,
  REPLICA_SETS,
  ROLE_BINDINGS,
  ROLES,
  SECRETS,
  SERVICE_ACCOUNTS,
  SERVICES,
} from './resources.ts';

const run = promisify(execFile);

const expectedRules = JSON.parse(
  await readFile(new URL('../expected/mailgun-cluster.effective-rules.json', import.meta.url), 'utf8'),
) as Record<'releaseNamespace' | 'otherNamespace' | 'nonResource', PolicyRule[]>;

/** The README's command: its release, namespace and values are what this suite installs. */
const README = fromRegistry(readmeInstall('mailgun-cluster'), e2eReleases().registry);
const value = (key: string) => {
  const set = README.values[key];
  assert.ok(set, `the README's mailgun-cluster install sets no ${key}`);
  return set;
};
const DOMAIN = value('mailgun.domain');
const RECIPIENT = value('recipient');
/** The user's key Secret, as the README creates it (`kubectl create secret`) and the install takes it. */
const KEY_SECRET = readmeSecret('mailgun-cluster');
/** The chart's default `leaderElection.leaseName`, in the release namespace. */
const LEASE = 'mailgun-cluster-controller';
/** The chart's default `replicaCount`. */
const REPLICAS = 2;
/** Any ServiceAccount token (a JWT: header and claims are base64url JSON objects). */
const JWT = /eyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]+/;

/** Cluster API reconciles each object at most once a second: its steps take seconds. */
const CAPI_WAIT = { timeoutMs: 45_000, intervalMs: 250 };

/**
 * A MailgunCluster as a user writes it and the Cluster naming it, whose controller (Cluster API's)
 * makes the Cluster its owner; returns the MailgunCluster's uid, which the controller puts into its mail.
 */
async function createClusterPair(admin: KubeConfig, namespace: string, name: string): Promise<string> {
  const mailgunCluster = await resource<MailgunCluster>(admin, MAILGUN_CLUSTERS).create({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'MailgunCluster',
    metadata: { namespace, name },
    spec: { priority: 'Urgent', request: `cluster ${name} for the e2e suite`, requester: 'dev@example.com' },
  });
  await resource<Cluster>(admin, CLUSTERS).create({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { namespace, name },
    spec: {
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'MailgunCluster', name },
    },
  });
  const { uid } = mailgunCluster.metadata;
  assert.ok(uid, `MailgunCluster ${name} has no uid`);
  return uid;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

/** A Cluster as far as the test reads what Cluster API reports. */
interface Cluster extends KubeObject {
  metadata: { namespace?: string; name?: string; uid?: string };
  spec: {
    controlPlaneEndpoint?: { host: string; port: number };
    infrastructureRef?: { apiGroup: string; kind: string; name: string };
  };
  status?: {
    phase?: string;
    initialization?: { infrastructureProvisioned?: boolean };
    conditions?: Condition[];
  };
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
}

interface MailgunCluster extends KubeObject {
  metadata: {
    namespace?: string;
    name?: string;
    uid?: string;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
  };
  spec?: { priority: string; request: string; requester: string };
  status?: { messageID?: string; initialization?: { provisioned?: boolean }; conditions?: Condition[] };
}

/** Waits until the MailgunCluster records a message id with `RequestSent=True`; returns the id. */
async function recordedMessageID(admin: KubeConfig, namespace: string, name: string): Promise<string> {
  let messageID = '';
  await eventually(
    async () => {
      const object = await resource<MailgunCluster>(admin, MAILGUN_CLUSTERS).get({ namespace, name });
      assert.ok(object.status?.messageID, `${name}: no messageID yet ${JSON.stringify(object.status)}`);
      messageID = object.status.messageID;
      assert.equal(object.status.conditions?.find((c) => c.type === 'RequestSent')?.status, 'True');
    },
    { timeoutMs: 45_000, intervalMs: 250 },
  );
  return messageID;
}

describe('mailgun-cluster on the real node: helm install, one mail each, failover, upgrade, uninstall, clusterctl init', () => {
  let admin: KubeConfig;
  const { release, namespace: system } = README;
  let work: TestNamespace;
  let peer: MailgunPeer;
  let clusterApi: ClusterApi;
  let logs: PodLogs;
  const apiKey = `key-${randomBytes(16).toString('hex')}`;
  /** The chart's fullname: the release's, since the release is named like the chart. */
  const fullname = release;
  const selector = `app.kubernetes.io/name=mailgun-cluster,app.kubernetes.io/instance=${release}`;
  const kubeconfig = adminKubeconfigPath();
  /** The Secrets in the release namespace before the install: the user's and any others'. */
  let secretsBeforeInstall: string[] = [];
  /** Every MailgunCluster of the run with its uid: each must end with exactly one mail. */
  const requested = new Map<string, string>();

  // Undone in reverse order, whatever `before` got to (a failed install must not leak namespaces).
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  /** The mails the peer accepted for one MailgunCluster (the controller marks each with the uid). */
  const mailsFor = (uid: string) => peer.accepted().filter((m) => m.userVariables['loopwright-uid'] === uid);

  /** Exactly one mail for every MailgunCluster so far, in the front's record and in Mailgun's mock. */
  async function assertOneMailEach(): Promise<void> {
    const stored = await peer.mockAccepted(DOMAIN);
    for (const [name, uid] of requested) {
      assert.equal(mailsFor(uid).length, 1, `mails for ${name}`);
      const subject = `[Urgent] New Cluster ${name} requested`;
      assert.equal(stored.filter((m) => m.subject === subject).length, 1, `mock's mails for ${name}`);
    }
  }

  async function requestCluster(name: string): Promise<string> {
    const uid = await createClusterPair(admin, work.name, name);
    requested.set(name, uid);
    return uid;
  }

  /** The chart's replicas, all Ready by the kubelet's probes, none restarted, none terminating. */
  async function readyReplicas(): Promise<PodSummary[]> {
    let ready: PodSummary[] = [];
    await eventually(
      async () => {
        ready = await pods(admin, system, selector);
        assert.equal(ready.length, REPLICAS, JSON.stringify(ready));
        for (const pod of ready) {
          assert.ok(pod.ready && !pod.deleting, JSON.stringify(pod));
          assert.equal(pod.restarts, 0, JSON.stringify(pod));
        }
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    return ready;
  }

  async function readLease(): Promise<LeaseSpec> {
    return (
      await resource<KubeObject & { spec: LeaseSpec }>(admin, LEASES).get({ namespace: system, name: LEASE })
    ).spec;
  }

  /** The names of the objects of `type` that `options` selects. */
  async function names(type: ResourceType, options: ListOptions): Promise<string[]> {
    const { items } = await resource<KubeObject & { metadata: { name: string } }>(admin, type).list(options);
    return items.map((item) => item.metadata.name);
  }

  /**
   * The namespace's Secrets but the release records of other helm releases: the other suites install
   * into the same namespace, at the same time (helm keeps a release's state in Secrets named
   * `sh.helm.release.v1.<release>.v<n>`).
   */
  async function secretsButOtherReleases(): Promise<string[]> {
    const record = /^sh\.helm\.release\.v1\.(.+)\.v\d+$/;
    return (await names(SECRETS, { namespace: system })).filter(
      (name) => (record.exec(name)?.[1] ?? release) === release,
    );
  }

  /**
   * The README's command word for word (run from the repository root), plus the Mailgun URL of the
   * peer and `--wait` for two Ready replicas.
   */
  async function install(): Promise<void> {
    await helm(
      [...README.args, ...testOnlyArgs(README, { timeout: '90s', values: { 'mailgun.url': peer.url } })],
      { kubeconfig, cwd: repoRoot, timeoutMs: 120_000 },
    );
  }

  before(async () => {
    admin = loadTestKubeConfig();
    // The README's namespace stays (the next suite may install into it); the test's own objects go.
    await enforceRestricted(admin, system);
    work = await createTestNamespace(admin, 'e2e-mg-work');
    cleanups.push(() => work.cleanup());
    // On this host, where the API server calls its webhooks on the loopback, as for the integration tests.
    clusterApi = await startClusterApi({ kubeConfig: admin, namespace: work.name });
    cleanups.push(() => clusterApi.stop());
    // The Clusters carry Cluster API's finalizer: they go while its manager still runs (the namespace
    // would otherwise stay Terminating).
    cleanups.push(async () => {
      await resource(admin, CLUSTERS).deleteCollection({ namespace: work.name });
      await eventually(
        async () => {
          assert.deepEqual(await names(CLUSTERS, { namespace: work.name }), []);
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    });
    // Pods reach the test process only on the node's bridge address.
    peer = await startMailgunPeer({ apiKey, host: loadTestNode().hostAddress });
    cleanups.push(() => peer.stop());
    // The key lives in a Secret the user created; the chart only references it.
    await createOrReplaceSecret(
      admin,
      KEY_SECRET.namespace,
      KEY_SECRET.name,
      secretData(KEY_SECRET, { MAILGUN_API_KEY: apiKey }),
    );
    cleanups.push(() => resource(admin, SECRETS).delete(KEY_SECRET));
    secretsBeforeInstall = await secretsButOtherReleases();
    logs = followPodLogs(admin, system, selector, 'controller');
    cleanups.push(() => {
      logs.stop();
      if (process.env.E2E_SHOW_OUTPUT)
        for (const [pod, text] of logs.byPod()) process.stderr.write(`--- ${pod}\n${text}`);
      return Promise.resolve();
    });
    // A failed helm test's Pod, which helm uninstall leaves (after it, as cleanups run in reverse).
    cleanups.push(() => deleteHelmTestLeftovers(admin, system, fullname));
    cleanups.push(() =>
      helm(
        ['uninstall', release, '--namespace', system, '--ignore-not-found', '--wait', '--timeout', '90s'],
        {
          kubeconfig,
          timeoutMs: 120_000,
        },
      ),
    );
    await install();
    // The README's release, pulled by containerd from the registry the release was pushed to.
    for (const pod of await readyReplicas())
      await assertRunsReleasedImage(admin, system, pod.name, 'mailgun-cluster', e2eReleases().current);
    // A replica of this install leads before the tests start (a Lease left in the README's namespace by
    // an earlier install lapses first, as client-go sees it).
    await leaderAmong(admin, system, LEASE, selector);
  });

  /** `helm test`: both CRDs served, a running replica holds the Lease, /metrics answers on the Service. */
  const assertHelmTestPassed = () =>
    assertHelmTestPasses(admin, release, system, { chart: 'mailgun-cluster', fullname, lease: LEASE });

  test('helm test passes: the CRDs served, the Lease held by a running replica, /metrics on the metrics Service', async () => {
    await assertHelmTestPassed();
  });

  test('a MailgunCluster named by a Cluster is owned by it through Cluster API, gets exactly one request mail and records its id', async () => {
    const uid = await requestCluster('first');
    const messageID = await recordedMessageID(admin, work.name, 'first');
    const cluster = await resource<Cluster>(admin, CLUSTERS).get({ namespace: work.name, name: 'first' });
    const owned = await resource<MailgunCluster>(admin, MAILGUN_CLUSTERS).get({
      namespace: work.name,
      name: 'first',
    });
    assert.deepEqual(owned.metadata.ownerReferences, [
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'first', uid: cluster.metadata.uid },
    ]);
    const [mail, ...more] = mailsFor(uid);
    assert.ok(mail);
    assert.equal(more.length, 0);
    assert.equal(mail.id, messageID);
    assert.equal(mail.subject, '[Urgent] New Cluster first requested');
    assert.equal(mail.to, RECIPIENT);
    assert.equal(mail.from, 'dev@example.com');
    await assertOneMailEach();
  });

  test('Cluster API reads what the pods report: provisioned once the endpoint is filled in; deleting the Cluster deletes the MailgunCluster, without a second mail', async () => {
    const uid = await requestCluster('fulfilled');
    await recordedMessageID(admin, work.name, 'fulfilled');
    const fulfilled = { namespace: work.name, name: 'fulfilled' };
    const cluster = () => resource<Cluster>(admin, CLUSTERS).get(fulfilled);
    await eventually(async () => {
      const waiting = await cluster();
      // The MailgunCluster's Ready condition, mirrored.
      const infrastructureReady = waiting.status?.conditions?.find((c) => c.type === 'InfrastructureReady');
      assert.equal(infrastructureReady?.reason, 'WaitingForFulfilment');
    }, CAPI_WAIT);
    const endpoint = { host: 'api.fulfilled.example.com', port: 6443 };
    await resource(admin, MAILGUN_CLUSTERS).patch(fulfilled, {
      merge: { spec: { controlPlaneEndpoint: endpoint } },
    });
    await eventually(async () => {
      const provisioned = await cluster();
      assert.deepEqual(provisioned.status?.initialization, { infrastructureProvisioned: true });
      assert.deepEqual(provisioned.spec.controlPlaneEndpoint, endpoint);
      assert.equal(provisioned.status.phase, 'Provisioned');
    }, CAPI_WAIT);
    assert.ok(await resource(admin, CLUSTERS).delete(fulfilled), 'the Cluster was already gone');
    await eventually(async () => {
      assert.equal(await objectExists(admin, { type: MAILGUN_CLUSTERS, key: fulfilled }), false);
      assert.equal(await objectExists(admin, { type: CLUSTERS, key: fulfilled }), false);
    }, CAPI_WAIT);
    // Gone, so the uninstall test no longer finds it; its one mail was checked here.
    requested.delete('fulfilled');
    assert.equal(mailsFor(uid).length, 1);
    await assertOneMailEach();
  });

  test('least privilege: the ServiceAccount may do exactly the checked-in list', async () => {
    const sa: ServiceAccountCredentials = await serviceAccountKubeconfig(admin, system, fullname);
    try {
      const inRelease = await effectiveRules(sa.kubeConfig, system);
      const inOther = await effectiveRules(sa.kubeConfig, work.name);
      assert.equal(inRelease.incomplete, false);
      assert.deepEqual(inRelease.resourceRules, normalizeRules(expectedRules.releaseNamespace));
      assert.deepEqual(inOther.resourceRules, normalizeRules(expectedRules.otherNamespace));
      assert.deepEqual(inRelease.nonResourceRules, normalizeRules(expectedRules.nonResource));
    } finally {
      await sa.remove();
    }
  });

  test('promtool check metrics passes on a replica’s /metrics at its pod IP', async () => {
    const [pod] = await readyReplicas();
    assert.ok(pod?.ip, 'the pod has no IP');
    const result = await promtoolCheckMetrics(`http://${pod.ip}:8080/metrics`);
    assert.equal(result.findings, '');
    assert.equal(result.exitCode, 0);
  });

  test('Prometheus discovers both replicas through the metrics Service and scrapes them; every dashboard panel has series, the alerts evaluate quietly', async () => {
    // The scenario has MailgunClusters only: the MailgunMachine controller has nothing to count yet.
    await assertObservedByPrometheus({
      chart: 'mailgun-cluster',
      release,
      admin,
      namespace: system,
      service: `${fullname}-metrics`,
      replicas: REPLICAS,
      controllers: ['mailguncluster'],
    });
  });

  test('failover: the leader deleted right after a MailgunCluster is created; one mail, another replica leads', async () => {
    const replicas = await readyReplicas();
    const leader = await leaseHolderPod(admin, system, LEASE);
    assert.ok(
      replicas.some((pod) => pod.name === leader),
      `leader ${leader} is not one of ${JSON.stringify(replicas)}`,
    );
    const uid = await requestCluster('failover');
    const deletedAt = Date.now();
    assert.ok(
      await resource(admin, PODS).delete({ namespace: system, name: leader }),
      `${leader} was already gone`,
    );
    let holder = leader;
    await eventually(
      async () => {
        holder = await leaseHolderPod(admin, system, LEASE);
        assert.notEqual(holder, leader, 'the deleted leader still holds the Lease');
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    // Taken over well before the deleted leader's lease could have lapsed (15 s after its last renewal):
    // it released the Lease on SIGTERM. The standby or the Deployment's replacement pod may win: in
    // client-go's algorithm a standby retries every 2-4.4 s, a new candidate tries at once.
    const lease = await readLease();
    assert.ok(
      Date.parse(lease.acquireTime ?? '') - deletedAt < ((lease.leaseDurationSeconds ?? 0) * 1000) / 2,
      `taken over only at ${lease.acquireTime ?? '?'}, ${Date.now() - deletedAt} ms after the delete`,
    );
    const messageID = await recordedMessageID(admin, work.name, 'failover');
    assert.deepEqual(
      mailsFor(uid).map((m) => m.id),
      [messageID],
    );
    // The Deployment replaced the deleted pod: two Ready replicas again, the new leader among them.
    const replaced = await readyReplicas();
    assert.ok(!replaced.some((pod) => pod.name === leader), 'the deleted leader is still listed');
    assert.ok(
      replaced.some((pod) => pod.name === holder),
      `the new leader ${holder} is not one of ${JSON.stringify(replaced)}`,
    );
    await assertOneMailEach();
  });

  test('helm upgrade to the next release (--reuse-values --set logLevel=debug) rolls the pods; one mail for a MailgunCluster created during the roll', async () => {
    const previous = new Set((await readyReplicas()).map((pod) => pod.name));
    const upgrade = helm(
      [
        'upgrade',
        release,
        ...releasedChartArgs(readmeInstall('mailgun-cluster').chart, e2eReleases().next),
        '--namespace',
        system,
        '--reuse-values',
        '--set',
        'logLevel=debug',
        '--wait',
        '--timeout',
        '90s',
      ],
      { kubeconfig },
    );
    // A rejection is awaited below; until then it must not count as unhandled.
    upgrade.catch(() => undefined);
    await eventually(
      async () => {
        const now = await pods(admin, system, selector);
        assert.ok(
          now.some((pod) => !previous.has(pod.name)),
          'the roll has not started',
        );
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const uid = await requestCluster('during-roll');
    await upgrade;
    const rolled = await readyReplicas();
    assert.ok(
      rolled.every((pod) => !previous.has(pod.name)),
      `not every pod was replaced: ${JSON.stringify(rolled)}`,
    );
    for (const pod of rolled)
      await assertRunsReleasedImage(admin, system, pod.name, 'mailgun-cluster', e2eReleases().next);
    const messageID = await recordedMessageID(admin, work.name, 'during-roll');
    assert.deepEqual(
      mailsFor(uid).map((m) => m.id),
      [messageID],
    );
    // The value reached the new pods: the standby logs its lease checks at debug level.
    await eventually(
      () => {
        const rolledLogs = rolled.map((pod) => logs.byPod().get(pod.name) ?? '');
        assert.ok(
          rolledLogs.some((text) => text.includes('"level":"debug"')),
          'no debug line from the new pods',
        );
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
    await assertOneMailEach();
  });

  test('helm test passes on the upgraded release', async () => {
    await assertHelmTestPassed();
  });

  test('every controller pod’s log: in-cluster credentials, no 403, neither a token nor the Mailgun key', () => {
    const byPod = logs.byPod();
    // The two installed, the failover's replacement, the two of the roll.
    assert.ok(
      byPod.size >= REPLICAS + 1 + REPLICAS,
      `pods seen: ${[...byPod.keys()].join(', ')}; found without a log: ${logs.withoutLog().join('; ') || 'none'}`,
    );
    const basic = Buffer.from(`api:${apiKey}`).toString('base64');
    for (const [pod, text] of byPod) {
      const start = text
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.message === 'target cluster');
      assert.ok(start, `${pod}: no start line in\n${text}`);
      // No kubeconfig anywhere: the ServiceAccount token the kubelet mounts, via the kubernetes Service.
      assert.equal(start.context, 'inClusterContext', `${pod}: ${JSON.stringify(start)}`);
      assert.doesNotMatch(text, /\b403\b|forbidden/i, pod);
      assert.ok(!text.includes(apiKey), `${pod}: the Mailgun API key appears in the log`);
      assert.ok(!text.includes(basic), `${pod}: the Basic credential appears in the log`);
      assert.doesNotMatch(text, JWT, `${pod}: a ServiceAccount token appears in the log`);
    }
  });

  test('helm uninstall leaves only the CRDs; the controller’s Lease stays, held by no pod, and a reinstall takes it', async () => {
    await helm(['uninstall', release, '--namespace', system, '--wait', '--timeout', '90s'], {
      kubeconfig,
    });
    await eventually(
      async () => {
        for (const [type, namespace, labelSelector] of [
          [DEPLOYMENTS, system, selector],
          [REPLICA_SETS, system, selector],
          [PODS, system, selector],
          [SERVICES, system, selector],
          [SERVICE_ACCOUNTS, system, selector],
          [ROLES, system, selector],
          [ROLE_BINDINGS, system, selector],
          [CLUSTER_ROLES, undefined, selector],
          [CLUSTER_ROLE_BINDINGS, undefined, selector],
          [ENDPOINT_SLICES, system, `kubernetes.io/service-name=${fullname}-metrics`],
        ] as const)
          assert.deepEqual(
            await names(type, { namespace, labelSelector }),
            [],
            `${resourceName(type)} ${namespace ?? ''} ${labelSelector}`,
          );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // Helm's release records are gone too; the user's key Secret stays: it never was the chart's.
    assert.deepEqual(await secretsButOtherReleases(), secretsBeforeInstall);
    assert.ok(secretsBeforeInstall.includes(KEY_SECRET.name));
    // The CRDs stay (helm never deletes crds/), and with them every MailgunCluster and its request.
    for (const crd of ['mailgunclusters', 'mailgunmachines'])
      await resource(admin, CUSTOM_RESOURCE_DEFINITIONS).get({
        name: `${crd}.infrastructure.cluster.x-k8s.io`,
      });
    for (const name of requested.keys()) await recordedMessageID(admin, work.name, name);
    await assertOneMailEach();
    // The Lease is the controller's, not the chart's: helm leaves it, the namespace takes it along.
    // The last leader cannot release it (helm deletes the RBAC while the pods are still stopping), so
    // it names a pod that is gone and lapses after leaseDurationSeconds; nothing renews it any more.
    const lease = await readLease();
    assert.ok(
      !(await names(PODS, { namespace: system })).includes(lease.holderIdentity?.split('_')[0] ?? ''),
      `the Lease is held by a live pod: ${JSON.stringify(lease)}`,
    );
    // What matters to a user: installing again (same release, same namespace) works, and leads.
    await install();
    const reinstalled = await readyReplicas();
    await eventually(
      async () => {
        const holder = await leaseHolderPod(admin, system, LEASE);
        assert.ok(
          reinstalled.some((pod) => pod.name === holder),
          holder,
        );
      },
      { timeoutMs: ((lease.leaseDurationSeconds ?? 15) + 10) * 1000, intervalMs: 500 },
    );
  });

  test('clusterctl init --infrastructure mailgun (the release’s provider repository) brings the provider up beside Cluster API: one mail; clusterctl delete removes it', async () => {
    // One provider at a time: the chart's release goes first (both would answer the same MailgunClusters).
    await helm(['uninstall', release, '--namespace', system, '--wait', '--timeout', '90s'], { kubeconfig });
    const scratch = await mkdtemp(join(tmpdir(), 'e2e-clusterctl-'));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const { current } = e2eReleases();
    const management = await prepareClusterctlManagement(
      admin,
      publishedRelease(current).clusterctlConfigPath,
      scratch,
    );
    cleanups.push(() => management.remove());
    const clusterctl = (await ensureTestTools()).clusterctl;
    const clusterctlRun = (args: string[]) =>
      run(clusterctl, [...args, '--config', management.configPath, '--kubeconfig', kubeconfig], {
        // clusterctl keeps its caches and overrides under $HOME/.cluster-api.
        env: {
          ...process.env,
          HOME: scratch,
          MAILGUN_DOMAIN: DOMAIN,
          MAIL_RECIPIENT: RECIPIENT,
          MAILGUN_API_KEY: apiKey,
          MAILGUN_URL: peer.url,
        },
        maxBuffer: 16 * 1024 * 1024,
      });
    const installed = await clusterctlRun(['init', '--infrastructure', `mailgun:v${current}`]);
    assert.match(
      installed.stderr + installed.stdout,
      /Installing provider="infrastructure-mailgun" version="v[\d.]+"/,
    );
    const providerNamespace = 'mailgun-system';
    const providerSelector =
      'cluster.x-k8s.io/provider=infrastructure-mailgun,app.kubernetes.io/component=controller';
    cleanups.push(() =>
      clusterctlRun(['delete', '--infrastructure', 'mailgun', '--include-namespace']).catch(() => undefined),
    );
    let running: PodSummary[] = [];
    await eventually(
      async () => {
        running = (await pods(admin, providerNamespace, providerSelector)).filter((pod) => pod.ready);
        assert.equal(running.length, REPLICAS, JSON.stringify(running));
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    for (const pod of running)
      await assertRunsReleasedImage(admin, providerNamespace, pod.name, 'mailgun-cluster', current);
    await leaderAmong(admin, providerNamespace, LEASE, providerSelector);
    // clusterctl's inventory: the provider it installed, beside the core it found.
    const inventory = await resource<
      KubeObject & { metadata: { namespace: string }; type: string; version: string }
    >(admin, CLUSTERCTL_PROVIDERS).list();
    assert.deepEqual(
      inventory.items.map((item) => `${item.metadata.namespace}/${item.type}/${item.version}`).sort(),
      ['capi-system/CoreProvider/v1.14.2', `mailgun-system/InfrastructureProvider/v${current}`],
    );
    await requestCluster('via-clusterctl');
    await recordedMessageID(admin, work.name, 'via-clusterctl');
    await assertOneMailEach();
    await clusterctlRun(['delete', '--infrastructure', 'mailgun', '--include-namespace']);
    await eventually(
      async () => {
        assert.equal(await objectExists(admin, ref(NAMESPACES, providerNamespace)), false);
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    // The CRDs stay (clusterctl deletes them only with --include-crd), and with them every request.
    for (const name of requested.keys()) await recordedMessageID(admin, work.name, name);
  });
});
