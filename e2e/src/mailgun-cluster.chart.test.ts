import { helm, HelmError } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import {
  assertBindings,
  assertCrdsFromSource,
  assertEnvKnownToController,
  assertNoBroadRules,
  assertPorts,
  assertRestrictedPod,
  assertSchemaRejects,
  appVersion,
} from './chart-assertions.ts';
import {
  chartPath,
  controllerContainer,
  envOf,
  kinds,
  normalizeRules,
  one,
  render,
  type Manifest,
  type PolicyRule,
} from './charts.ts';

const chart = 'mailgun-cluster';
const expected = JSON.parse(
  await readFile(new URL('../expected/mailgun-cluster.rbac.json', import.meta.url), 'utf8'),
) as { controller: PolicyRule[]; leaderElection: PolicyRule[] };
// The chart has required values without sensible defaults; CI and these tests use this file.
const ciValues = `${chartPath(chart)}/ci/test-values.yaml`;
const rules = (m: Manifest) => normalizeRules(m.rules as PolicyRule[]);
const renderCi = (values: Record<string, unknown> = {}) => render(chart, { valuesFiles: [ciValues], values });

describe('mailgun-cluster chart', () => {
  test('helm lint passes with the CI values, also with --strict', async () => {
    await helm(['lint', chartPath(chart), '--values', ciValues]);
    await helm(['lint', '--strict', chartPath(chart), '--values', ciValues]);
  });

  test('domain, recipient and the API key Secret are required, each with a message naming it', async () => {
    for (const [values, message] of [
      [{ recipient: 'a@example.com', 'mailgun.apiKey.existingSecret': 's' }, /mailgun.domain is required/],
      [{ 'mailgun.domain': 'mg.example.com', 'mailgun.apiKey.existingSecret': 's' }, /recipient is required/],
      [{ 'mailgun.domain': 'mg.example.com', recipient: 'a@example.com' }, /mailgun.apiKey.existingSecret/],
    ] as const)
      await assert.rejects(render(chart, { values }), (error: unknown) => {
        assert.ok(error instanceof HelmError);
        assert.match(error.stderr, message);
        return true;
      });
  });

  test('render: exactly these objects, CRDs from crds/, RBAC as expected, provider label everywhere', async () => {
    const manifests = await renderCi();
    assert.deepEqual(kinds(manifests), [
      'ClusterRole/rel-mailgun-cluster',
      'ClusterRoleBinding/rel-mailgun-cluster',
      'CustomResourceDefinition/mailgunclusters.infrastructure.cluster.x-k8s.io',
      'CustomResourceDefinition/mailgunmachines.infrastructure.cluster.x-k8s.io',
      'Deployment/controllers/rel-mailgun-cluster',
      'Role/controllers/rel-mailgun-cluster-leader-election',
      'RoleBinding/controllers/rel-mailgun-cluster-leader-election',
      'Service/controllers/rel-mailgun-cluster-metrics',
      'ServiceAccount/controllers/rel-mailgun-cluster',
    ]);
    await assertCrdsFromSource(chart, manifests);
    assert.deepEqual(rules(one(manifests, 'ClusterRole')), normalizeRules(expected.controller));
    assert.deepEqual(rules(one(manifests, 'Role')), normalizeRules(expected.leaderElection));
    assertNoBroadRules(manifests);
    assertBindings(manifests, 'rel-mailgun-cluster', 'controllers');
    const all = await renderCi({
      'serviceMonitor.enabled': true,
      'podMonitor.enabled': true,
      'podDisruptionBudget.enabled': true,
      'mailgun.apiKey.existingSecret': '',
      'mailgun.apiKey.create': true,
      'mailgun.apiKey.value': 'key-123',
    });
    for (const m of all)
      assert.equal(
        m.metadata.labels?.['cluster.x-k8s.io/provider'],
        'infrastructure-mailgun',
        `${m.kind} ${m.metadata.name}`,
      );
    const deployment = one(all, 'Deployment');
    const template = (deployment.spec as { template: { metadata: { labels: Record<string, string> } } })
      .template;
    assert.equal(template.metadata.labels['cluster.x-k8s.io/provider'], 'infrastructure-mailgun');
  });

  test('Deployment: 2 replicas, restricted, probes, image, env matching the config parser', async () => {
    const deployment = one(await renderCi(), 'Deployment');
    assert.equal((deployment.spec as { replicas: number }).replicas, 2);
    assertRestrictedPod(deployment);
    assertPorts(deployment, { metrics: 8080, probes: 8081 });
    const container = controllerContainer(deployment);
    assert.equal(container.image, `ghcr.io/loopwright/mailgun-cluster:${await appVersion(chart)}`);
    const env = envOf(container);
    assert.deepEqual(env, {
      POD_NAME: JSON.stringify({ fieldRef: { fieldPath: 'metadata.name' } }),
      POD_NAMESPACE: JSON.stringify({ fieldRef: { fieldPath: 'metadata.namespace' } }),
      MAILGUN_DOMAIN: 'mg.example.com',
      MAILGUN_URL: 'https://api.mailgun.net',
      MAILGUN_API_KEY_FILE: '/etc/mailgun/api-key',
      MAIL_RECIPIENT: 'clusters@example.com',
      MAILGUN_TIMEOUT: '30s',
      MAILGUN_EVENTS_SETTLE_TIME: '30m',
      MAILGUN_UNAUTHORIZED_RETRY_DELAY: '5m',
      WORKERS: '1',
      LEADER_ELECT: 'true',
      LEADER_ELECTION_NAMESPACE: 'controllers',
      LEADER_ELECTION_ID: 'mailgun-cluster-controller',
      METRICS_BIND_ADDRESS: ':8080',
      HEALTH_PROBE_BIND_ADDRESS: ':8081',
      KUBE_API_QPS: '-1',
      KUBE_API_BURST: '1000',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    assertEnvKnownToController(env, chart);
  });

  test('every configuration value reaches its env var', async () => {
    const env = envOf(
      controllerContainer(
        one(
          await renderCi({
            'mailgun.url': 'https://api.eu.mailgun.net',
            'mailgun.timeout': '10s',
            'mailgun.eventsSettleTime': '10m',
            'mailgun.unauthorizedRetryDelay': '1m',
            workers: 4,
            'kubeApi.qps': 50,
            'kubeApi.burst': 80,
            'leaderElection.leaseName': 'mg',
            logLevel: 'debug',
            logFormat: 'console',
          }),
          'Deployment',
        ),
      ),
    );
    assert.equal(env.MAILGUN_URL, 'https://api.eu.mailgun.net');
    assert.equal(env.MAILGUN_TIMEOUT, '10s');
    assert.equal(env.MAILGUN_EVENTS_SETTLE_TIME, '10m');
    assert.equal(env.MAILGUN_UNAUTHORIZED_RETRY_DELAY, '1m');
    assert.equal(env.WORKERS, '4');
    assert.equal(env.KUBE_API_QPS, '50');
    assert.equal(env.KUBE_API_BURST, '80');
    assert.equal(env.LEADER_ELECTION_ID, 'mg');
    assert.equal(env.LOG_LEVEL, 'debug');
    assert.equal(env.LOG_FORMAT, 'console');
  });

  test('existingSecret: mounted as the key file, no Secret rendered, the key name configurable', async () => {
    const manifests = await renderCi({ 'mailgun.apiKey.secretKey': 'token' });
    assert.equal(manifests.filter((m) => m.kind === 'Secret').length, 0);
    const pod = (one(manifests, 'Deployment').spec as { template: { spec: { volumes: unknown[] } } }).template
      .spec;
    assert.deepEqual(
      pod.volumes.find((v) => (v as { name: string }).name === 'mailgun-api-key'),
      {
        name: 'mailgun-api-key',
        secret: {
          secretName: 'mailgun-api-key',
          defaultMode: 0o440,
          items: [{ key: 'token', path: 'api-key' }],
        },
      },
    );
    const container = controllerContainer(one(manifests, 'Deployment'));
    assert.deepEqual(
      (container.volumeMounts as unknown[]).find((v) => (v as { name: string }).name === 'mailgun-api-key'),
      { name: 'mailgun-api-key', mountPath: '/etc/mailgun', readOnly: true },
    );
    // The key is never in an env var.
    assert.equal(envOf(container).MAILGUN_API_KEY, undefined);
  });

  test('apiKey.create: a Secret from values, referenced by the Deployment; the key only in the Secret', async () => {
    const manifests = await render(chart, {
      values: {
        'mailgun.domain': 'mg.example.com',
        recipient: 'a@example.com',
        'mailgun.apiKey.create': true,
        'mailgun.apiKey.value': 'key-secret-value',
      },
    });
    const secret = one(manifests, 'Secret');
    assert.equal(secret.metadata.name, 'rel-mailgun-cluster-mailgun');
    assert.deepEqual(secret.data, { 'api-key': Buffer.from('key-secret-value').toString('base64') });
    const deployment = one(manifests, 'Deployment');
    assert.doesNotMatch(JSON.stringify(deployment), /key-secret-value/);
    const pod = (
      deployment.spec as {
        template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } };
      }
    ).template.spec;
    assert.equal(
      pod.volumes.find((v) => v.name === 'mailgun-api-key')?.secret?.secretName,
      'rel-mailgun-cluster-mailgun',
    );
  });

  test('watchNamespaces: a Role + RoleBinding in each instead of the ClusterRole, WATCH_NAMESPACE', async () => {
    const manifests = await renderCi({ watchNamespaces: ['capi', 'capi-2'] });
    assert.equal(
      manifests.filter((m) => m.kind === 'ClusterRole' || m.kind === 'ClusterRoleBinding').length,
      0,
    );
    const inCapi = manifests.filter((m) => m.metadata.namespace === 'capi');
    assert.deepEqual(rules(one(inCapi, 'Role', 'rel-mailgun-cluster')), normalizeRules(expected.controller));
    one(inCapi, 'RoleBinding', 'rel-mailgun-cluster');
    assertBindings(manifests, 'rel-mailgun-cluster', 'controllers');
    one(
      manifests.filter((m) => m.metadata.namespace === 'capi-2'),
      'RoleBinding',
      'rel-mailgun-cluster',
    );
    assert.equal(envOf(controllerContainer(one(manifests, 'Deployment'))).WATCH_NAMESPACE, 'capi,capi-2');
  });

  test('leader election off needs one replica', async () => {
    const manifests = await renderCi({ 'leaderElection.enabled': false, replicaCount: 1 });
    assert.equal(envOf(controllerContainer(one(manifests, 'Deployment'))).LEADER_ELECT, 'false');
    assert.equal(manifests.filter((m) => m.metadata.name.endsWith('leader-election')).length, 0);
    await assert.rejects(renderCi({ 'leaderElection.enabled': false }), /needs replicaCount 1/);
  });

  test('ServiceMonitor, PodMonitor and PodDisruptionBudget toggles', async () => {
    const off = await renderCi();
    for (const kind of ['ServiceMonitor', 'PodMonitor', 'PodDisruptionBudget'])
      assert.equal(off.filter((m) => m.kind === kind).length, 0, kind);
    const on = await renderCi({
      'serviceMonitor.enabled': true,
      'podMonitor.enabled': true,
      'podDisruptionBudget.enabled': true,
    });
    for (const kind of ['ServiceMonitor', 'PodMonitor', 'PodDisruptionBudget']) one(on, kind);
  });

  test('terminationGracePeriodSeconds: 60 by default (reconcile grace, then the Lease release), configurable', async () => {
    const gracePeriod = async (values: Record<string, unknown>) =>
      (
        one(await renderCi(values), 'Deployment').spec as {
          template: { spec: { terminationGracePeriodSeconds?: number } };
        }
      ).template.spec.terminationGracePeriodSeconds;
    assert.equal(await gracePeriod({}), 60);
    assert.equal(await gracePeriod({ terminationGracePeriodSeconds: 90 }), 90);
  });

  test('values.schema.json rejects wrong types (helm template and helm lint fail)', async () => {
    for (const set of [
      'terminationGracePeriodSeconds="60"',
      'terminationGracePeriodSeconds=0',
      'workers="1"',
      'workers=1001',
      'mailgun.timeout=30',
      'mailgun.eventsSettleTime="30 minutes"',
      'mailgun.url="https://api.mailgun.net/v3"',
      'mailgun.domain="bad_domain"',
      'recipient="notmail"',
      'mailgun.apiKey.create="true"',
      'watchNamespaces="a"',
      'metricsPort=70000',
      'logLevel="loud"',
      'podDisruptionBudget.enabled=1',
      'unknownValue=1',
    ])
      await assertSchemaRejects(chart, set, ['--values', ciValues]);
  });
});
