/**
 * `pnpm demo` end to end: the real entry point as a child process, as a user runs it.
 *
 * - On a node: the node of `pnpm cluster up` when the environment names one (KUBECONFIG and
 *   LOOPWRIGHT_NODE: the dev loop), else a node the demo starts itself (CI, as root on a fresh machine;
 *   the machine's one-node lock serialises it with the e2e suites). The controllers must run as pods of
 *   their charts, the At's command in a pod on the node, and everything the demo created must be gone.
 * - With KUBECONFIG pointing at a control plane this test starts (which, like any cluster without nodes,
 *   has no kubelet: the test plays it, the demo must not).
 * - The fallback without a node (LOOPWRIGHT_DEMO_NODE=0 stands for a machine where none can start: the
 *   same code path as a non-root user's, taken before any attempt), and interrupted with Ctrl-C halfway
 *   (nothing may outlive it).
 */
import { KubeClient, loadKubeConfig, type KubeObject } from '@loopwright/runtime';
import { findTestNode, helm, workspaceControllers } from '@loopwright/cluster';
import { eventually, startControlPlane, type ControlPlane } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  alive,
  assertConverged,
  demoEnv,
  descendants,
  NAMESPACE,
  NODE_NAME,
  runDemo,
  type DemoRun,
} from './demo-run.ts';
import {
  ATS,
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  CUSTOM_RESOURCE_DEFINITIONS,
  DEPLOYMENTS,
  EVENTS,
  NAMESPACES,
  NODES,
  PODS,
  ROLE_BINDINGS,
  ROLES,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from './resources.ts';

const CONTROLLERS = workspaceControllers().map(({ name }) => name);
/** The Node of a cluster `startCluster()` starts (the testing package's name for it). */
const OWN_NODE_NAME = 'loopwright-node';
const FALLBACK =
  /^no node here \(LOOPWRIGHT_DEMO_NODE=0\): falling back to the API-server-only control plane \(kube-apiserver, etcd, kube-controller-manager\); the demo plays kubelet for the At's pod$/;

/** What a kubelet does for the At's pod: the command container ran and exited 0. */
async function playKubelet(client: KubeClient, run: DemoRun): Promise<void> {
  while (run.child.exitCode === null && run.child.signalCode === null) {
    const at = await client
      .resource<KubeObject & { status?: { podName?: string } }>(ATS)
      .get({ namespace: NAMESPACE, name: 'hello' })
      .catch(() => undefined);
    const podName = at?.status?.podName;
    if (podName) {
      const now = new Date().toISOString();
      const done = await client
        .resource(PODS)
        .status.patch(
          { namespace: NAMESPACE, name: podName },
          {
            merge: {
              status: {
                phase: 'Succeeded',
                containerStatuses: [
                  {
                    name: 'command',
                    image: 'busybox',
                    imageID: '',
                    ready: false,
                    restartCount: 0,
                    state: {
                      terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now },
                    },
                  },
                ],
              },
            },
          },
        )
        .then(
          () => true,
          () => false, // the pod is not there yet
        );
      if (done) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

interface NodeObservations {
  /** Deployment name -> the most ready replicas seen. */
  deployments: Map<string, number>;
  /** The node the At's pod was bound to. */
  atPodNode: string | undefined;
}

/** What the API server shows while the demo runs on a cluster the test can reach too. */
async function observeNode(client: KubeClient, run: DemoRun): Promise<NodeObservations> {
  const seen: NodeObservations = { deployments: new Map(), atPodNode: undefined };
  while (run.child.exitCode === null && run.child.signalCode === null) {
    const deployments = await client
      .resource<KubeObject & { metadata: { name: string }; status?: { readyReplicas?: number } }>(DEPLOYMENTS)
      .list({ namespace: NAMESPACE })
      .catch(() => ({ items: [] }));
    for (const { metadata, status } of deployments.items)
      seen.deployments.set(
        metadata.name,
        Math.max(seen.deployments.get(metadata.name) ?? 0, status?.readyReplicas ?? 0),
      );
    const pod = await client
      .resource<KubeObject & { spec: { nodeName?: string } }>(PODS)
      .get({ namespace: NAMESPACE, name: 'hello-pod' })
      .catch(() => undefined);
    seen.atPodNode = pod?.spec.nodeName ?? seen.atPodNode;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return seen;
}

/** What the demo's own lines say about a run on a node (the only evidence where the node is its own). */
function assertRanOnNode(output: string, nodeName: string): void {
  assert.doesNotMatch(output, /falling back|plays kubelet/);
  for (const controller of CONTROLLERS)
    assert.match(
      output,
      new RegExp(
        `^  ${controller}: Deployment ${controller} ready, pod ${controller}-\\S+ Running on node ${nodeName} \\(ghcr\\.io/loopwright/${controller}:0\\.1\\.0\\)$`,
        'm',
      ),
    );
  assert.match(
    output,
    new RegExp(
      `^  At hello: its command ran once, when it was due, in pod hello-pod on node ${nodeName}: exit code 0, output "hello from the Loopwright demo"$`,
      'm',
    ),
  );
  assert.match(output, new RegExp(`^uninstalled the releases ${CONTROLLERS.join(', ')}$`, 'm'));
  assert.match(output, new RegExp(`^deleted namespace ${NAMESPACE} and Node ${NODE_NAME}$`, 'm'));
  const saved = new RegExp(
    `^saved the logs of the controller pods \\(${CONTROLLERS.length}\\) to (\\S+)$`,
    'm',
  ).exec(output);
  assert.ok(saved?.[1], 'no saved controller logs');
  for (const controller of CONTROLLERS) {
    const logs = readdirLogs(saved[1], controller);
    assert.equal(logs.length, 1, `${controller}: ${logs.join(' ')}`);
    assert.match(readFileSync(logs[0] ?? '', 'utf8'), /"message":"starting/, `${controller}'s pod log`);
  }
}

/** The saved logs of a controller's pods (named `<pod>.log`, the pod named after its Deployment). */
function readdirLogs(dir: string, controller: string): string[] {
  return readdirSync(dir)
    .filter((file) => new RegExp(`^${controller}-[a-z0-9]+-[a-z0-9]+\\.log$`).test(file))
    .map((file) => join(dir, file));
}

// Independent runs (the embedded ones start control planes of their own): side by side, to keep the
// suite's wall time near one demo run.
describe('pnpm demo', { concurrency: true }, () => {
  let controlPlane: ControlPlane;
  let client: KubeClient;

  before(async () => {
    controlPlane = await startControlPlane();
    client = new KubeClient(loadKubeConfig({ kubeconfig: controlPlane.kubeconfigPath }), {
      rateLimit: false,
    });
  });
  after(async () => {
    await client.close();
    await controlPlane.stop();
  });

  it('with KUBECONFIG: says so, converges, then deletes its namespace and Node and keeps the CRDs', async () => {
    const run = runDemo(demoEnv({ KUBECONFIG: controlPlane.kubeconfigPath }));
    await playKubelet(client, run);
    const { code } = await run.exited;
    const output = run.output();
    assert.equal(code, 0, output);
    assert.equal(
      output.split('\n')[0],
      `using the cluster of KUBECONFIG (context loopwright, server ${controlPlane.server})`,
    );
    assert.doesNotMatch(output, /plays kubelet/);
    assertConverged(output);
    assert.match(output, new RegExp(`^deleted namespace ${NAMESPACE} and Node ${NODE_NAME}$`, 'm'));
    // Gone, Cluster included: Cluster API removed its finalizer before the demo stopped it.
    assert.equal(await client.resource(NAMESPACES).getOptional({ name: NAMESPACE }), undefined);
    assert.equal(await client.resource(NODES).getOptional({ name: NODE_NAME }), undefined);
    // Stopped with its webhooks, which would reject every later Cluster API object; its CRDs stay.
    assert.match(
      output,
      /^ {2}and Cluster API v[\d.]+'s CRDs \(\*\.cluster\.x-k8s\.io\), without its manager$/m,
    );
    const webhooks = await client
      .resource<KubeObject & { metadata: { name: string } }>(VALIDATING_WEBHOOK_CONFIGURATIONS)
      .list();
    assert.deepEqual(
      webhooks.items.map((w) => w.metadata.name).filter((name) => name.startsWith('capi-')),
      [],
    );
    const logs = /controller logs kept in (\S+)$/m.exec(output)?.[1];
    assert.match(readFileSync(join(logs ?? '', 'cluster-api-manager.log'), 'utf8'), /"Starting manager"/);
    const events = await client
      .resource(EVENTS)
      .list({ namespace: 'default', fieldSelector: `involvedObject.name=${NODE_NAME}` });
    assert.deepEqual(events.items, []);
    for (const crd of [
      'ats.cnat.programming-kubernetes.info',
      'mailgunclusters.infrastructure.cluster.x-k8s.io',
      'clusters.cluster.x-k8s.io',
    ])
      assert.ok(await client.resource(CUSTOM_RESOURCE_DEFINITIONS).getOptional({ name: crd }), crd);
  });

  it('without a node (the fallback): says why in one line, kubelet played for the one pod, converges', async () => {
    const run = runDemo(demoEnv({ LOOPWRIGHT_DEMO_NODE: '0' }));
    const { code } = await run.exited;
    const output = run.output();
    assert.equal(code, 0, output);
    assert.match(output.split('\n')[0] ?? '', FALLBACK);
    assert.match(
      output,
      /^ {2}At hello: its pod hello-pod was created once, when it was due; no kubelet here, so the demo reported it finished \(exit code 0\) and the command itself did not run$/m,
    );
    assertConverged(output);
  });

  it('on a node: the controllers as pods of their charts, the At run by the kubelet, then nothing left', async () => {
    // The dev loop's node (`pnpm cluster up`) when there is one, else (CI) the demo starts its own.
    const shared = findTestNode();
    const kubeconfig = shared ? process.env.KUBECONFIG : undefined;
    const run = runDemo(
      shared && kubeconfig
        ? demoEnv({ KUBECONFIG: kubeconfig, LOOPWRIGHT_NODE: JSON.stringify(shared) })
        : demoEnv(),
    );
    const admin = kubeconfig
      ? new KubeClient(loadKubeConfig({ kubeconfig }), { rateLimit: false })
      : undefined;
    try {
      const observed = admin ? await observeNode(admin, run) : undefined;
      const { code } = await run.exited;
      const output = run.output();
      assert.equal(code, 0, output);
      const nodeName = shared?.nodeName ?? OWN_NODE_NAME;
      assert.match(
        output.split('\n')[0] ?? '',
        shared
          ? new RegExp(`^using the Loopwright node of KUBECONFIG and LOOPWRIGHT_NODE \\(node ${nodeName}, `)
          : /^no KUBECONFIG: starting a single-node cluster on this machine/,
      );
      assertConverged(output);
      assertRanOnNode(output, nodeName);
      if (!admin || !observed) {
        // The demo's own node is gone with the demo: its lines are the evidence that it stopped it.
        assert.match(output, /^ {2}node stopped; restored: /m);
        return;
      }
      assert.equal(observed.atPodNode, nodeName);
      assert.deepEqual(
        [...observed.deployments].sort(),
        CONTROLLERS.map((controller) => [controller, 1]).sort(),
      );
      assert.equal(await admin.resource(NAMESPACES).getOptional({ name: NAMESPACE }), undefined);
      assert.equal(await admin.resource(NODES).getOptional({ name: NODE_NAME }), undefined);
      // The releases' cluster-scoped objects and the Role cloud-node's chart puts into `default`.
      for (const [type, key] of [
        [CLUSTER_ROLES, { name: 'cloud-node' }],
        [CLUSTER_ROLE_BINDINGS, { name: 'cloud-node' }],
        [ROLES, { namespace: 'default', name: 'cloud-node-events' }],
        [ROLE_BINDINGS, { namespace: 'default', name: 'cloud-node-events' }],
      ] as const)
        assert.equal(await admin.resource(type).getOptional(key), undefined, `${type.plural} ${key.name}`);
      const releases = await helm(
        [
          'list',
          '--namespace',
          NAMESPACE,
          '--short',
          // Helm 4 has no --all: every state a release record can be in.
          ...['--deployed', '--failed', '--pending', '--uninstalling', '--uninstalled', '--superseded'],
        ],
        { kubeconfig },
      );
      assert.equal(releases.stdout.trim(), '');
    } finally {
      await admin?.close();
    }
  });

  it('Ctrl-C halfway: exits 130 and leaves no process behind', async () => {
    const run = runDemo(demoEnv({ LOOPWRIGHT_DEMO_NODE: '0' }));
    await eventually(
      () => {
        assert.match(run.output(), /^applied: /m);
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const pid = run.child.pid ?? -1;
    const before = descendants(pid);
    // etcd, kube-apiserver, kube-controller-manager, the Mailgun mock and the controllers.
    assert.ok(before.length >= 4 + CONTROLLERS.length, `descendants: ${before.join(' ')}`);
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    assert.equal(code, 130, run.output());
    assert.match(run.output(), /interrupted \(SIGINT\): cleaning up/);
    assert.deepEqual(before.filter(alive), []);
  });
});
