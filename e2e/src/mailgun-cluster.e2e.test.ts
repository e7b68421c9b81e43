/**
 * mailgun-cluster end to end, as it runs in a cluster: helm installs the chart (API key by
 * existingSecret); the controller runs from source with only a token of the chart's ServiceAccount and
 * the env of the chart's Deployment, against the Mailgun peer (Mailgun's own mock behind an API-faithful
 * front). The test plays the Cluster API core controller (it creates the owning Cluster).
 */
import {
  clusterApiCrdName,
  clusterApiStandInCrd,
  createTestNamespace,
  eventually,
  helm,
  loadTestKubeConfig,
  startMailgunPeer,
  type MailgunPeer,
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
  await readFile(new URL('../expected/mailgun-cluster.effective-rules.json', import.meta.url), 'utf8'),
) as Record<'releaseNamespace' | 'otherNamespace' | 'nonResource', PolicyRule[]>;

const DOMAIN = 'mg.example.com';
const RECIPIENT = 'clusters@example.com';

/** Cluster API's Cluster and Machine, reduced to what this test writes (the real ones come with CAPI core). */
async function installCapiTestCrds(admin: KubeConfig): Promise<void> {
  for (const kind of ['Cluster', 'Machine'] as const) {
    await api(
      admin,
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      clusterApiStandInCrd(kind),
    ).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.status === 409)) throw error;
    });
    await eventually(
      async () => {
        const crd = await api<{ status?: { conditions?: { type: string; status: string }[] } }>(
          admin,
          'GET',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${clusterApiCrdName(kind)}`,
        );
        assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
      },
      { timeoutMs: 20_000 },
    );
  }
}

interface MailgunCluster {
  status?: { messageID?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

describe('mailgun-cluster: helm install, ServiceAccount token, one request mail', () => {
  let admin: KubeConfig;
  let system: TestNamespace;
  let work: TestNamespace;
  let sa: ServiceAccountCredentials;
  let controller: ControllerProcess;
  let peer: MailgunPeer;
  let healthPort: number;
  const apiKey = `key-${randomBytes(16).toString('hex')}`;
  const release = `mg-${randomBytes(3).toString('hex')}`;
  const fullname = `${release}-mailgun-cluster`;
  const podName = `${fullname}-5c6d7e8f9-abcde`;

  // Undone in reverse order, whatever `before` got to (a failed install must not leak namespaces).
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  before(async () => {
    admin = loadTestKubeConfig();
    await installCapiTestCrds(admin);
    system = await createTestNamespace(admin, 'e2e-mg-system');
    cleanups.push(() => system.cleanup());
    work = await createTestNamespace(admin, 'e2e-mg-work');
    cleanups.push(() => work.cleanup());
    peer = await startMailgunPeer({ apiKey });
    cleanups.push(() => peer.stop());
    healthPort = await freeLoopbackPort();
    // The key lives in a Secret the user created; the chart only references it.
    await api(admin, 'POST', `/api/v1/namespaces/${system.name}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'mailgun-api-key' },
      stringData: { 'api-key': apiKey },
    });
    await helm(
      [
        'install',
        release,
        chartPath('mailgun-cluster'),
        '--namespace',
        system.name,
        '--set-json',
        `healthPort=${healthPort}`,
        '--set',
        `mailgun.domain=${DOMAIN},mailgun.url=${peer.url},recipient=${RECIPIENT}`,
        '--set',
        'mailgun.apiKey.existingSecret=mailgun-api-key',
      ],
      { kubeconfig: adminKubeconfigPath() },
    );
    cleanups.push(() =>
      helm(['uninstall', release, '--namespace', system.name], { kubeconfig: adminKubeconfigPath() }),
    );
    sa = await serviceAccountKubeconfig(admin, system.name, fullname);
    cleanups.push(() => sa.remove());
    const env = await deploymentEnv(admin, system.name, fullname, podName);
    // Play kubelet for the Secret volume: the key file at a temporary path instead of /etc/mailgun.
    const secret = await api<{ data: Record<string, string> }>(
      admin,
      'GET',
      `/api/v1/namespaces/${system.name}/secrets/mailgun-api-key`,
    );
    assert.equal(env.MAILGUN_API_KEY_FILE, '/etc/mailgun/api-key');
    const keyDir = await mkdtemp(join(tmpdir(), 'loopwright-e2e-mailgun-'));
    const encodedKey = secret.data['api-key'];
    assert.ok(encodedKey, 'the Secret has no api-key');
    await writeFile(join(keyDir, 'api-key'), Buffer.from(encodedKey, 'base64'), { mode: 0o400 });
    cleanups.push(() => rm(keyDir, { recursive: true, force: true }));
    controller = startController(repoRoot, 'packages/mailgun-cluster/src/main.ts', {
      ...env,
      MAILGUN_API_KEY_FILE: join(keyDir, 'api-key'),
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

  test('a MailgunCluster owned by a Cluster gets exactly one request mail and records its id', async () => {
    const cluster = await api<{ metadata: { uid: string } }>(
      admin,
      'POST',
      `/apis/cluster.x-k8s.io/v1beta2/namespaces/${work.name}/clusters`,
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'demo' },
        spec: {
          infrastructureRef: {
            apiGroup: 'infrastructure.cluster.x-k8s.io',
            kind: 'MailgunCluster',
            name: 'demo',
          },
        },
      },
    );
    await api(
      admin,
      'POST',
      `/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/${work.name}/mailgunclusters`,
      {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
        kind: 'MailgunCluster',
        metadata: {
          name: 'demo',
          ownerReferences: [
            {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'Cluster',
              name: 'demo',
              uid: cluster.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          priority: 'Urgent',
          request: 'one small cluster for the e2e suite',
          requester: 'dev@example.com',
        },
      },
    );
    const path = `/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/${work.name}/mailgunclusters/demo`;
    let messageID = '';
    await eventually(
      async () => {
        const object = await api<MailgunCluster>(admin, 'GET', path);
        assert.ok(object.status?.messageID, 'no messageID yet');
        messageID = object.status.messageID;
        assert.equal(object.status.conditions?.find((c) => c.type === 'RequestSent')?.status, 'True');
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const mails = peer.accepted();
    assert.equal(mails.length, 1);
    const [mail] = mails;
    assert.ok(mail);
    assert.equal(mail.id, messageID);
    assert.equal(mail.subject, '[Urgent] New Cluster demo requested');
    assert.equal(mail.to, RECIPIENT);
    assert.equal(mail.from, 'dev@example.com');
    // Mailgun's own mock stored exactly that one mail.
    assert.equal((await peer.mockAccepted(DOMAIN)).length, 1);
  });

  test('least privilege: the ServiceAccount may do exactly the checked-in list', async () => {
    const inRelease = await effectiveRules(sa.kubeConfig, system.name);
    const inOther = await effectiveRules(sa.kubeConfig, work.name);
    assert.equal(inRelease.incomplete, false);
    assert.deepEqual(inRelease.resourceRules, normalizeRules(expectedRules.releaseNamespace));
    assert.deepEqual(inOther.resourceRules, normalizeRules(expectedRules.otherNamespace));
    assert.deepEqual(inRelease.nonResourceRules, normalizeRules(expectedRules.nonResource));
  });

  test('Prometheus scrapes the controller: target up, reconcile and workqueue samples', async () => {
    // The scenario has MailgunClusters only: the MailgunMachine controller has nothing to count yet.
    await assertScrapedByPrometheus({
      job: 'mailgun-cluster',
      port: healthPort,
      controllers: ['mailguncluster'],
    });
  });

  test('promtool check metrics passes on /metrics', async () => {
    const result = await promtoolCheckMetrics(`http://127.0.0.1:${healthPort}/metrics`);
    assert.equal(result.findings, '');
    assert.equal(result.exitCode, 0);
  });

  test('no 403, and neither the API key nor the token in the controller output', () => {
    const output = controller.output();
    assert.ok(output.length > 0);
    assert.doesNotMatch(output, /\b403\b|forbidden/i);
    assert.ok(!output.includes(apiKey), 'the Mailgun API key appears in the output');
    assert.ok(
      !output.includes(Buffer.from(`api:${apiKey}`).toString('base64')),
      'the Basic credential appears',
    );
    assert.ok(!output.includes(sa.token), 'the ServiceAccount token appears in the output');
  });
});
