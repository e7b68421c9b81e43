/**
 * The mailgun-cluster chart: the shared contract (chart-contract.ts), then what is its own: Mailgun's
 * settings and API key, Cluster API's provider label and the Cluster API it requires.
 */
import { HelmError } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertEnvKnownToController, assertSchemaRejects } from './chart-assertions.ts';
import { testChartContract } from './chart-contract.ts';
import { chartPath, controllerContainer, envOf, one, render } from './charts.ts';

const chart = 'mailgun-cluster';
// The chart has required values without sensible defaults; CI and these tests use this file.
const ciValues = `${chartPath(chart)}/ci/test-values.yaml`;
/** What the chart requires the cluster to serve: Cluster API's contract version. */
const CLUSTER_API = 'cluster.x-k8s.io/v1beta2';
const renderCi = (values: Record<string, unknown> = {}) =>
  render(chart, { valuesFiles: [ciValues], apiVersions: [CLUSTER_API], values });

testChartContract({
  chart,
  valuesFiles: [ciValues],
  apiVersions: [CLUSTER_API],
  watchNamespaces: true,
  sharding: true,
  workers: 1,
  leaseName: 'mailgun-cluster-controller',
  ownVolumes: [
    {
      name: 'mailgun-api-key',
      secret: {
        secretName: 'mailgun-api-key',
        defaultMode: 288,
        items: [{ key: 'api-key', path: 'api-key' }],
      },
    },
  ],
  ownVolumeMounts: [{ name: 'mailgun-api-key', mountPath: '/etc/mailgun', readOnly: true }],
});

describe('mailgun-cluster chart', () => {
  test('domain, recipient and the API key Secret are required, each with a message naming it', async () => {
    for (const [values, message] of [
      [{ recipient: 'a@example.com', 'mailgun.apiKey.existingSecret': 's' }, /mailgun.domain is required/],
      [{ 'mailgun.domain': 'mg.example.com', 'mailgun.apiKey.existingSecret': 's' }, /recipient is required/],
      [{ 'mailgun.domain': 'mg.example.com', recipient: 'a@example.com' }, /mailgun.apiKey.existingSecret/],
    ] as const)
      await assert.rejects(render(chart, { values, apiVersions: [CLUSTER_API] }), (error: unknown) => {
        assert.ok(error instanceof HelmError);
        assert.match(error.stderr, message);
        return true;
      });
  });

  test('Cluster API’s provider label on every object, hooks included', async () => {
    const all = await renderCi({
      'serviceMonitor.enabled': true,
      'podMonitor.enabled': true,
      'podDisruptionBudget.enabled': true,
      'networkPolicy.enabled': true,
      'mailgun.apiKey.existingSecret': '',
      'mailgun.apiKey.create': true,
      'mailgun.apiKey.value': 'key-123',
    });
    for (const m of all.filter((x) => x.kind !== 'CustomResourceDefinition'))
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

  test('a cluster without Cluster API v1beta2: the install fails, saying what to install first', async () => {
    await assert.rejects(render(chart, { valuesFiles: [ciValues] }), (error: unknown) => {
      assert.ok(error instanceof HelmError);
      assert.match(error.stderr, /serves no cluster\.x-k8s\.io\/v1beta2: install Cluster API/);
      return true;
    });
    // v1beta1 alone (Cluster API before v1.11) is not enough either.
    await assert.rejects(
      render(chart, { valuesFiles: [ciValues], apiVersions: ['cluster.x-k8s.io/v1beta1'] }),
      /serves no cluster\.x-k8s\.io\/v1beta2/,
    );
  });
  test('default Deployment: exactly this env', async () => {
    const container = controllerContainer(one(await renderCi(), 'Deployment'));
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
      WARM_STANDBY: 'true',
      METRICS_BIND_ADDRESS: ':8080',
      HEALTH_PROBE_BIND_ADDRESS: ':8081',
      KUBE_API_QPS: '-1',
      KUBE_API_BURST: '1000',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    assertEnvKnownToController(env, chart);
  });

  test('every Mailgun value reaches its env var', async () => {
    const env = envOf(
      controllerContainer(
        one(
          await renderCi({
            'mailgun.url': 'https://api.eu.mailgun.net',
            'mailgun.timeout': '10s',
            'mailgun.eventsSettleTime': '10m',
            'mailgun.unauthorizedRetryDelay': '1m',
          }),
          'Deployment',
        ),
      ),
    );
    assert.equal(env.MAILGUN_URL, 'https://api.eu.mailgun.net');
    assert.equal(env.MAILGUN_TIMEOUT, '10s');
    assert.equal(env.MAILGUN_EVENTS_SETTLE_TIME, '10m');
    assert.equal(env.MAILGUN_UNAUTHORIZED_RETRY_DELAY, '1m');
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
      apiVersions: [CLUSTER_API],
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

  test('values.schema.json rejects wrong types (helm template and helm lint fail)', async () => {
    for (const set of [
      'workers="1"',
      'workers=1001',
      'mailgun.timeout=30',
      'mailgun.eventsSettleTime="30 minutes"',
      'mailgun.url="https://api.mailgun.net/v3"',
      'mailgun.domain="bad_domain"',
      'recipient="notmail"',
      'mailgun.apiKey.create="true"',
      'podDisruptionBudget.enabled=1',
    ])
      await assertSchemaRejects(chart, set, ['--values', ciValues, '--api-versions', CLUSTER_API]);
  });
});
