/**
 * cloud-node end to end, as it runs in a cluster: helm installs the chart (token and network by
 * existingSecret, HCCM's `hcloud` Secret shape); the controller runs from source with only a token of the
 * chart's ServiceAccount and the env of the chart's Deployment, against the fake Hetzner Cloud API of
 * @loopwright/testing. The test plays kubelet: it registers a Node with the uninitialized taint, named
 * like the fake's one server.
 *
 * Nodes are cluster-scoped and the API server is shared with other suites, so the install sets the
 * chart's `nodeLabelSelector` to this run's label: the controller (which may delete Nodes) never sees
 * anyone else's Nodes.
 */
import {
  createTestNamespace,
  eventually,
  helm,
  loadTestKubeConfig,
  startFakeHcloud,
  type FakeHcloud,
  type TestNamespace,
  freeLoopbackPort,
} from '@loopwright/testing';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chartPath, normalizeRules, repoRoot, type PolicyRule } from './charts.ts';
import {
  adminKubeconfigPath,
  api,
  ApiError,
  deploymentEnv,
  effectiveRules,
  serviceAccountKubeconfig,
  startController,
  type ControllerProcess,
  type ServiceAccountCredentials,
} from './kube.ts';
import { assertScrapedByPrometheus, promtoolCheckMetrics } from './prometheus.ts';

const expectedRules = JSON.parse(
  await readFile(new URL('../expected/cloud-node.effective-rules.json', import.meta.url), 'utf8'),
) as Record<'releaseNamespace' | 'defaultNamespace' | 'otherNamespace' | 'nonResource', PolicyRule[]>;

const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
const RUN_LABEL = 'loopwright.dev/e2e-cloud-node';
const NETWORK = 'e2e-k8s';

interface Node {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { providerID?: string; taints?: { key: string; value?: string; effect: string }[] };
  status?: { addresses?: { type: string; address: string }[] };
}

interface EventsV1 {
  metadata: { name: string };
  reason: string;
  type: string;
  reportingController?: string;
  regarding: { kind: string; name: string };
}

describe('cloud-node: helm install, ServiceAccount token, a tainted Node initialised', () => {
  let admin: KubeConfig;
  let system: TestNamespace;
  let other: TestNamespace;
  let sa: ServiceAccountCredentials;
  let controller: ControllerProcess;
  let fake: FakeHcloud;
  let healthPort: number;
  let networkId: number;
  let installOutput = '';
  const run = randomBytes(3).toString('hex');
  // A Hetzner token is 64 alphanumerics; a fresh one, so finding it in the output means it leaked.
  const hcloudToken = randomBytes(32).toString('hex');
  const release = `cn-${run}`;
  const fullname = `${release}-cloud-node`;
  const podName = `${fullname}-6b7c8d9f5-qwxyz`;
  const nodeName = `e2e-cn-${run}`;

  // Undone in reverse order, whatever `before` got to (a failed install must not leak namespaces).
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  before(async () => {
    admin = loadTestKubeConfig();
    system = await createTestNamespace(admin, 'e2e-cn-system');
    cleanups.push(() => system.cleanup());
    other = await createTestNamespace(admin, 'e2e-cn-other');
    cleanups.push(() => other.cleanup());
    fake = await startFakeHcloud({ token: hcloudToken });
    cleanups.push(() => fake.close());
    // The controller resolves HCLOUD_NETWORK at start (and exits if the project has no such network).
    networkId = fake.networks.add({ name: NETWORK, ip_range: '10.0.0.0/16' }).id;
    healthPort = await freeLoopbackPort();
    // The token (and the network) live in a Secret the user created, shaped like HCCM's `hcloud` Secret;
    // the chart only references it.
    await api(admin, 'POST', `/api/v1/namespaces/${system.name}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hcloud' },
      stringData: { token: hcloudToken, network: NETWORK },
    });
    const installed = await helm(
      [
        'install',
        release,
        chartPath('cloud-node'),
        '--namespace',
        system.name,
        '--set-json',
        `healthPort=${healthPort}`,
        '--set-json',
        `hcloud.endpoint=${JSON.stringify(fake.url)}`,
        '--set-json',
        'hcloud.token.existingSecret="hcloud"',
        '--set-json',
        `nodeLabelSelector=${JSON.stringify(`${RUN_LABEL}=${run}`)}`,
      ],
      { kubeconfig: adminKubeconfigPath() },
    );
    installOutput = installed.stdout;
    cleanups.push(() =>
      helm(['uninstall', release, '--namespace', system.name], { kubeconfig: adminKubeconfigPath() }),
    );
    sa = await serviceAccountKubeconfig(admin, system.name, fullname);
    cleanups.push(() => sa.remove());
    // Play kubelet for the env: HCLOUD_NETWORK comes from the Secret's optional `network` key.
    const env = await deploymentEnv(admin, system.name, fullname, podName, { resolveSecretKeyRefs: true });
    assert.equal(env.HCLOUD_NETWORK, NETWORK);
    assert.equal(env.HCLOUD_ENDPOINT, fake.url);
    // ...and for the Secret volume: the token file at a temporary path instead of /etc/hcloud.
    assert.equal(env.HCLOUD_TOKEN_FILE, '/etc/hcloud/token');
    assert.equal(env.HCLOUD_TOKEN, undefined);
    const secret = await api<{ data: Record<string, string> }>(
      admin,
      'GET',
      `/api/v1/namespaces/${system.name}/secrets/hcloud`,
    );
    const encodedToken = secret.data.token;
    assert.ok(encodedToken, 'the Secret has no token');
    const tokenDir = await mkdtemp(join(tmpdir(), 'loopwright-e2e-hcloud-'));
    await writeFile(join(tokenDir, 'token'), Buffer.from(encodedToken, 'base64'), { mode: 0o400 });
    cleanups.push(() => rm(tokenDir, { recursive: true, force: true }));
    controller = startController(repoRoot, 'packages/cloud-node/src/main.ts', {
      ...env,
      HCLOUD_TOKEN_FILE: join(tokenDir, 'token'),
      KUBECONFIG: sa.kubeconfigPath,
    });
    cleanups.push(async () => {
      await controller.stop();
      if (process.env.E2E_SHOW_OUTPUT) process.stderr.write(controller.output());
    });
    await eventually(
      async () => {
        assert.equal((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status, 200);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    ).catch((error: unknown) => {
      throw new Error(`controller not ready; output:\n${controller.output()}`, { cause: error });
    });
  });

  test('the chart installed its objects, and helm reports the release deployed', async () => {
    const { stdout } = await helm(['status', release, '--namespace', system.name, '--output', 'json'], {
      kubeconfig: adminKubeconfigPath(),
    });
    assert.equal((JSON.parse(stdout) as { info: { status: string } }).info.status, 'deployed');
    // NOTES.txt rendered for this install.
    assert.match(installOutput, new RegExp(`installed as\\s+${fullname} in ${system.name}`));
    assert.match(installOutput, new RegExp(`token: Secret ${system.name}/hcloud, key token\\.`));
    await api(admin, 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${fullname}`);
    // Events about Nodes go to `default`: the events Role is there, not in the release namespace.
    await api(admin, 'GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/${fullname}-events`);
    await assert.rejects(
      api(
        admin,
        'GET',
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${system.name}/roles/${fullname}-events`,
      ),
      (error: unknown) => error instanceof ApiError && error.status === 404,
    );
  });

  test('a Node with the uninitialized taint gets providerID, labels, addresses, and loses the taint', async () => {
    const server = fake.servers.add({
      name: nodeName,
      server_type: 'cpx31',
      location: 'fsn1',
      private_net: [{ network: networkId, ip: '10.0.0.7', alias_ips: [], mac_address: '86:00:00:00:00:07' }],
    });
    const publicIpv4 = server.public_net.ipv4?.ip;
    assert.ok(publicIpv4);
    cleanups.push(() => deleteNodeAndItsEvents(admin, nodeName));
    await api(admin, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: nodeName, labels: { [RUN_LABEL]: run } },
      spec: {
        taints: [
          { key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' },
          { key: 'e2e-keep', value: 'yes', effect: 'NoExecute' },
        ],
      },
    });
    await eventually(
      async () => {
        const node = await api<Node>(admin, 'GET', `/api/v1/nodes/${nodeName}`);
        assert.equal(node.spec?.providerID, `hcloud://${server.id}`);
        // Only the uninitialized taint is removed (the API server's admission adds
        // node.kubernetes.io/not-ready to new Nodes: not the controller's to judge).
        assert.deepEqual(
          (node.spec.taints ?? []).filter((t) => t.key !== 'node.kubernetes.io/not-ready'),
          [{ key: 'e2e-keep', value: 'yes', effect: 'NoExecute' }],
        );
        assert.deepEqual(node.metadata.labels, {
          [RUN_LABEL]: run,
          'node.kubernetes.io/instance-type': 'cpx31',
          'beta.kubernetes.io/instance-type': 'cpx31',
          'topology.kubernetes.io/region': 'fsn1',
          'failure-domain.beta.kubernetes.io/region': 'fsn1',
          'topology.kubernetes.io/zone': 'fsn1-dc14',
          'failure-domain.beta.kubernetes.io/zone': 'fsn1-dc14',
          'instance.hetzner.cloud/provided-by': 'cloud',
        });
        // ipv4 (the chart's default family) and the InternalIP in HCLOUD_NETWORK, from the Secret.
        assert.deepEqual(node.status?.addresses, [
          { type: 'Hostname', address: nodeName },
          { type: 'ExternalIP', address: publicIpv4 },
          { type: 'InternalIP', address: '10.0.0.7' },
        ]);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    ).catch((error: unknown) => {
      throw new Error(`Node not initialised; controller output:\n${controller.output()}`, { cause: error });
    });
    // The Event about the Node was written to `default`, with the chart's Role there.
    await eventually(async () => {
      const events = await api<{ items: EventsV1[] }>(
        admin,
        'GET',
        '/apis/events.k8s.io/v1/namespaces/default/events',
      );
      assert.ok(
        events.items.some(
          (e) =>
            e.regarding.kind === 'Node' &&
            e.regarding.name === nodeName &&
            e.reason === 'Synced' &&
            e.type === 'Normal' &&
            e.reportingController === 'loopwright.dev/cloud-node',
        ),
      );
    });
    // Every Hetzner request carried the Secret's token (none was refused).
    assert.ok(fake.requests.count() > 0);
    assert.equal(fake.requests.count({ status: 401 }), 0);
    // Leader election ran with the name-scoped Lease rule: this replica holds the chart's Lease.
    const lease = await api<{ spec: { holderIdentity: string } }>(
      admin,
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${system.name}/leases/cloud-node`,
    );
    assert.match(lease.spec.holderIdentity, new RegExp(`^${podName}`));
  });

  test('least privilege: the ServiceAccount may do exactly the checked-in list', async () => {
    const rulesIn = async (namespace: string) => {
      const review = await effectiveRules(sa.kubeConfig, namespace);
      assert.equal(review.incomplete, false);
      assert.deepEqual(review.nonResourceRules, normalizeRules(expectedRules.nonResource));
      return review.resourceRules;
    };
    assert.deepEqual(await rulesIn(system.name), normalizeRules(expectedRules.releaseNamespace));
    assert.deepEqual(await rulesIn('default'), normalizeRules(expectedRules.defaultNamespace));
    assert.deepEqual(await rulesIn(other.name), normalizeRules(expectedRules.otherNamespace));
  });

  test('Prometheus scrapes the controller: target up, reconcile and workqueue samples', async () => {
    // Both controllers: the Node controller and the Node lifecycle controller.
    await assertScrapedByPrometheus({
      job: 'cloud-node',
      port: healthPort,
      controllers: ['cloud-node', 'cloud-node-lifecycle'],
    });
  });

  test('promtool check metrics passes on /metrics', async () => {
    const result = await promtoolCheckMetrics(`http://127.0.0.1:${healthPort}/metrics`);
    assert.equal(result.findings, '');
    assert.equal(result.exitCode, 0);
  });

  test('/metrics: Hetzner API requests by templated endpoint and code, and the remaining budget', async () => {
    const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    const requests = (endpoint: string, code: string): number => {
      const sample = text
        .split('\n')
        .find(
          (line) =>
            line.startsWith('hcloud_api_requests_total{') &&
            line.includes(`endpoint="${endpoint}"`) &&
            line.includes(`code="${code}"`),
        );
      return sample === undefined ? 0 : Number(sample.split(' ').at(-1));
    };
    assert.equal(requests('/locations', '200'), 1, 'the start-up token check: one request');
    assert.ok(requests('/servers', '200') >= 1, 'the server lookups of the initialisation');
    const remaining = /^hcloud_ratelimit_remaining (\d+)$/m.exec(text)?.[1];
    assert.ok(remaining !== undefined && Number(remaining) > 3000 && Number(remaining) < 3600, remaining);
  });

  test('no 403, and neither the Hetzner token nor the ServiceAccount token in the controller output', () => {
    const output = controller.output();
    assert.ok(output.length > 0);
    assert.doesNotMatch(output, /\b403\b|forbidden/i);
    assert.ok(!output.includes(hcloudToken), 'the Hetzner Cloud token appears in the output');
    assert.ok(!output.includes(sa.token), 'the ServiceAccount token appears in the output');
  });
});

/** Nodes are cluster-scoped and the controller's Events about one sit in `default`: remove both. */
async function deleteNodeAndItsEvents(admin: KubeConfig, name: string): Promise<void> {
  await api(admin, 'DELETE', `/api/v1/nodes/${name}`).catch((error: unknown) => {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  });
  const events = await api<{ items: EventsV1[] }>(
    admin,
    'GET',
    '/apis/events.k8s.io/v1/namespaces/default/events',
  );
  for (const event of events.items.filter((e) => e.regarding.kind === 'Node' && e.regarding.name === name))
    await api(
      admin,
      'DELETE',
      `/apis/events.k8s.io/v1/namespaces/default/events/${event.metadata.name}`,
    ).catch(() => undefined);
}
