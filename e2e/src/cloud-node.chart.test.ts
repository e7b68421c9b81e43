/**
 * The cloud-node chart: the shared contract (chart-contract.ts), then what is its own: the Hetzner Cloud
 * token and network, the Node tolerations, host networking, Events in `default`.
 */
import { HelmError } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { assertEnvKnownToController, assertRestrictedPod, assertSchemaRejects } from './chart-assertions.ts';
import { testChartContract } from './chart-contract.ts';
import {
  chartPath,
  controllerContainer,
  envOf,
  isTestHook,
  normalizeRules,
  one,
  render,
  type Manifest,
  type PolicyRule,
} from './charts.ts';

const chart = 'cloud-node';
const expected = JSON.parse(
  await readFile(new URL('../expected/cloud-node.rbac.json', import.meta.url), 'utf8'),
) as { controller: PolicyRule[]; events: PolicyRule[]; leaderElection: PolicyRule[] };
// The token's Secret is a required value without a sensible default; CI and these tests use this file.
const ciValues = `${chartPath(chart)}/ci/test-values.yaml`;
const rules = (m: Manifest) => normalizeRules(m.rules as PolicyRule[]);
const renderCi = (values: Record<string, unknown> = {}) => render(chart, { valuesFiles: [ciValues], values });

interface PodSpec {
  serviceAccountName: string;
  dnsPolicy?: string;
  hostNetwork?: boolean;
  priorityClassName?: string;
  tolerations?: unknown[];
  nodeSelector?: unknown;
  affinity?: { podAntiAffinity?: unknown };
  imagePullSecrets?: unknown;
  volumes: { name: string; secret?: { secretName: string } }[];
}
interface PodTemplate {
  metadata: Manifest['metadata'] & { annotations?: Record<string, string> };
  spec: PodSpec;
}
const podTemplate = (deployment: Manifest) => (deployment.spec as { template: PodTemplate }).template;
const rawEnv = (deployment: Manifest) => controllerContainer(deployment).env ?? [];

/** What the chart tolerates whatever the values, in this order (HCCM's chart tolerates the same). */
const requiredTolerations = [
  { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' },
  { key: 'CriticalAddonsOnly', operator: 'Exists' },
  { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
];

testChartContract({
  chart,
  valuesFiles: [ciValues],
  extraObjects: [
    'Role/controllers/rel-cloud-node-pod-events',
    'Role/default/rel-cloud-node-events',
    'RoleBinding/controllers/rel-cloud-node-pod-events',
    'RoleBinding/default/rel-cloud-node-events',
  ],
  watchNamespaces: false,
  sharding: false,
  ownTolerations: requiredTolerations,
  ownVolumes: [
    {
      name: 'hcloud-token',
      secret: { secretName: 'hcloud', defaultMode: 288, items: [{ key: 'token', path: 'token' }] },
    },
  ],
  ownVolumeMounts: [{ name: 'hcloud-token', mountPath: '/etc/hcloud', readOnly: true }],
});

describe('cloud-node chart', () => {
  test('the token Secret is required, and a created one needs the token; each message names the value', async () => {
    for (const [values, message] of [
      [{}, /hcloud.token.existingSecret/],
      [{ 'hcloud.token.create': true }, /hcloud.token.value is required/],
      [
        { 'hcloud.token.existingSecret': 'hcloud', 'hcloud.network.value': 'k8s' },
        /hcloud.network.value is only written to the Secret this chart creates/,
      ],
      [
        {
          'hcloud.token.create': true,
          'hcloud.token.value': 'abc',
          'hcloud.network.value': 'k8s',
          'hcloud.network.secretKey': '',
        },
        /hcloud.network.secretKey is required/,
      ],
    ] as const)
      await assert.rejects(render(chart, { values }), (error: unknown) => {
        assert.ok(error instanceof HelmError);
        assert.match(error.stderr, message);
        return true;
      });
  });

  test('RBAC: Events only in `default` and the release namespace, nothing on Secrets', async () => {
    const manifests = (await renderCi()).filter((m) => !isTestHook(m));
    assert.deepEqual(rules(one(manifests, 'Role', 'rel-cloud-node-events')), normalizeRules(expected.events));
    assert.equal(one(manifests, 'Role', 'rel-cloud-node-events').metadata.namespace, 'default');
    assert.deepEqual(
      rules(one(manifests, 'Role', 'rel-cloud-node-pod-events')),
      normalizeRules(expected.events),
    );
    assert.equal(one(manifests, 'Role', 'rel-cloud-node-pod-events').metadata.namespace, 'controllers');
    // Nothing on Secrets at all: the token reaches the pod as a volume, never through the API.
    for (const m of manifests.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role'))
      for (const rule of m.rules as PolicyRule[]) assert.ok(!(rule.resources ?? []).includes('secrets'));
    // Events are still recorded with leader election off.
    one(
      await renderCi({ 'leaderElection.enabled': false, replicaCount: 1 }),
      'Role',
      'rel-cloud-node-events',
    );
  });
  test('default Deployment: resources, and exactly this env', async () => {
    const container = controllerContainer(one(await renderCi(), 'Deployment'));
    assert.deepEqual(container.resources, {
      requests: { cpu: '50m', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
    const env = envOf(container);
    assert.deepEqual(env, {
      POD_NAME: JSON.stringify({ fieldRef: { fieldPath: 'metadata.name' } }),
      POD_NAMESPACE: JSON.stringify({ fieldRef: { fieldPath: 'metadata.namespace' } }),
      HCLOUD_TOKEN_FILE: '/etc/hcloud/token',
      HCLOUD_NETWORK: JSON.stringify({ secretKeyRef: { name: 'hcloud', key: 'network', optional: true } }),
      HCLOUD_ENDPOINT: 'https://api.hetzner.cloud/v1',
      HCLOUD_INSTANCES_ADDRESS_FAMILY: 'ipv4',
      HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: 'true',
      HCLOUD_DEBUG: 'false',
      NODE_MONITOR_PERIOD: '5s',
      NODE_STATUS_UPDATE_FREQUENCY: '5m',
      LEADER_ELECT: 'true',
      LEADER_ELECTION_NAMESPACE: 'controllers',
      LEADER_ELECTION_ID: 'cloud-node',
      WARM_STANDBY: 'true',
      WORKERS: '16',
      METRICS_BIND_ADDRESS: ':8080',
      HEALTH_PROBE_BIND_ADDRESS: ':8081',
      KUBE_API_QPS: '-1',
      KUBE_API_BURST: '1000',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    assertEnvKnownToController(env, chart);
  });
  test('scheduling: tolerates uninitialized, not-ready and control-plane Nodes; DNS from the node; system-cluster-critical', async () => {
    const pod = podTemplate(one(await renderCi(), 'Deployment')).spec;
    assert.deepEqual(pod.tolerations, requiredTolerations);
    assert.ok(
      (pod.tolerations as { key: string; effect?: string }[]).some(
        (t) => t.key === 'node.cloudprovider.kubernetes.io/uninitialized' && t.effect === 'NoSchedule',
      ),
    );
    assert.equal(pod.dnsPolicy, 'Default');
    assert.equal(pod.priorityClassName, 'system-cluster-critical');
    assert.equal(pod.hostNetwork, undefined);
    // The default affinity spreads the leader and its standby across nodes.
    assert.ok(pod.affinity?.podAntiAffinity);
  });

  test('every Hetzner Cloud and Node value reaches its env var', async () => {
    const deployment = one(
      await renderCi({
        'hcloud.endpoint': 'http://hcloud.internal:8080/v1',
        'hcloud.addressFamily': 'dualstack',
        'hcloud.zoneLabels': false,
        nodeLabelSelector: 'pool in (a,b),!legacy',
        nodeMonitorPeriod: '10s',
        nodeStatusUpdateFrequency: '1m30s',
      }),
      'Deployment',
    );
    const env = envOf(controllerContainer(deployment));
    assert.equal(env.HCLOUD_ENDPOINT, 'http://hcloud.internal:8080/v1');
    assert.equal(env.HCLOUD_INSTANCES_ADDRESS_FAMILY, 'dualstack');
    assert.equal(env.HCLOUD_INSTANCES_ZONE_LABEL_ENABLED, 'false');
    assert.equal(env.NODE_SELECTOR, 'pool in (a,b),!legacy');
    assert.equal(env.NODE_MONITOR_PERIOD, '10s');
    assert.equal(env.NODE_STATUS_UPDATE_FREQUENCY, '1m30s');
    // Every variable the chart sets is one the controller reads (the runtime's: chart-contract.ts).
    assertEnvKnownToController(env, chart);
  });

  test('hcloud.debug: HCLOUD_DEBUG=true and LOG_LEVEL debug, so the per-request lines are printed', async () => {
    const env = envOf(
      controllerContainer(one(await renderCi({ 'hcloud.debug': true, logLevel: 'warn' }), 'Deployment')),
    );
    assert.equal(env.HCLOUD_DEBUG, 'true');
    assert.equal(env.LOG_LEVEL, 'debug');
  });

  test('existingSecret: the token mounted as a file, the network an optional key, no Secret rendered', async () => {
    const manifests = await renderCi({
      'hcloud.token.existingSecret': 'my-hcloud',
      'hcloud.token.secretKey': 'api-token',
      'hcloud.network.secretKey': 'private-network',
    });
    assert.equal(manifests.filter((m) => m.kind === 'Secret').length, 0);
    const deployment = one(manifests, 'Deployment');
    assert.deepEqual(
      podTemplate(deployment).spec.volumes.find((v) => v.name === 'hcloud-token'),
      {
        name: 'hcloud-token',
        secret: {
          secretName: 'my-hcloud',
          defaultMode: 0o440,
          items: [{ key: 'api-token', path: 'token' }],
        },
      },
    );
    const container = controllerContainer(deployment);
    assert.deepEqual(
      (container.volumeMounts as unknown[]).find((v) => (v as { name: string }).name === 'hcloud-token'),
      { name: 'hcloud-token', mountPath: '/etc/hcloud', readOnly: true },
    );
    const env = envOf(container);
    assert.equal(env.HCLOUD_TOKEN_FILE, '/etc/hcloud/token');
    // The token is never in an env var.
    assert.equal(env.HCLOUD_TOKEN, undefined);
    assert.ok(!rawEnv(deployment).some((e) => JSON.stringify(e.valueFrom ?? {}).includes('api-token')));
    assert.equal(
      env.HCLOUD_NETWORK,
      JSON.stringify({ secretKeyRef: { name: 'my-hcloud', key: 'private-network', optional: true } }),
    );
    // No restart checksum: the chart does not know an existing Secret's content.
    assert.equal(podTemplate(deployment).metadata.annotations, undefined);
    // Without a network key, no HCLOUD_NETWORK at all.
    const noNetwork = envOf(
      controllerContainer(one(await renderCi({ 'hcloud.network.secretKey': '' }), 'Deployment')),
    );
    assert.equal(noNetwork.HCLOUD_NETWORK, undefined);
  });

  test('token.create: a Secret from values, referenced by the Deployment; the token only in the Secret', async () => {
    const manifests = await render(chart, {
      values: {
        'hcloud.token.create': true,
        'hcloud.token.value': 'token-secret-value',
        'hcloud.network.value': 'k8s-net',
      },
    });
    const secret = one(manifests, 'Secret');
    assert.equal(secret.metadata.name, 'rel-cloud-node-hcloud');
    assert.equal(secret.metadata.namespace, 'controllers');
    assert.deepEqual(secret.data, {
      token: Buffer.from('token-secret-value').toString('base64'),
      network: Buffer.from('k8s-net').toString('base64'),
    });
    const deployment = one(manifests, 'Deployment');
    assert.doesNotMatch(JSON.stringify(deployment), /token-secret-value/);
    const pod = podTemplate(deployment);
    assert.equal(
      pod.spec.volumes.find((v) => v.name === 'hcloud-token')?.secret?.secretName,
      'rel-cloud-node-hcloud',
    );
    assert.equal(
      envOf(controllerContainer(deployment)).HCLOUD_NETWORK,
      JSON.stringify({ secretKeyRef: { name: 'rel-cloud-node-hcloud', key: 'network', optional: true } }),
    );
    // A new token or network restarts the pods (the controller reads both once).
    const checksum = pod.metadata.annotations?.['checksum/hcloud'];
    assert.match(checksum ?? '', /^[a-f0-9]{64}$/);
    const rotated = podTemplate(
      one(
        await render(chart, {
          values: {
            'hcloud.token.create': true,
            'hcloud.token.value': 'another-token',
            'hcloud.network.value': 'k8s-net',
          },
        }),
        'Deployment',
      ),
    );
    assert.notEqual(rotated.metadata.annotations?.['checksum/hcloud'], checksum);
    // Without a network value the created Secret holds only the token (the optional key is absent).
    const tokenOnly = one(
      await render(chart, { values: { 'hcloud.token.create': true, 'hcloud.token.value': 't' } }),
      'Secret',
    );
    assert.deepEqual(tokenOnly.data, { token: Buffer.from('t').toString('base64') });
  });

  test('pod values: hostNetwork, DNS from the node, priorityClassName can be emptied, still restricted', async () => {
    const deployment = one(await renderCi({ hostNetwork: true, priorityClassName: '' }), 'Deployment');
    const template = podTemplate(deployment);
    assert.equal(template.spec.hostNetwork, true);
    assert.equal(template.spec.dnsPolicy, 'Default');
    assert.equal(template.spec.priorityClassName, undefined);
    // Still the restricted securityContext (hostNetwork is a namespace-level Pod Security decision).
    assertRestrictedPod(deployment);
  });
  test('values.schema.json rejects wrong types (helm template and helm lint fail)', async () => {
    for (const set of [
      'hcloud.endpoint="api.hetzner.cloud"',
      'hcloud.token.create="true"',
      'hcloud.token.existingSecret=true',
      'hcloud.token.secretKey=""',
      'hcloud.token.value="has space"',
      'hcloud.network.secretKey=1',
      'hcloud.addressFamily="ipv5"',
      'hcloud.zoneLabels="false"',
      'hcloud.debug=1',
      'nodeLabelSelector=["a"]',
      'nodeMonitorPeriod=5',
      'nodeStatusUpdateFrequency="5 minutes"',
      'leaderElection.leaseName="Not_A_Name"',
      'hostNetwork="true"',
      'workers=0',
      'tolerations={}',
      'podDisruptionBudget.enabled=1',
    ])
      await assertSchemaRejects(chart, set, ['--values', ciValues]);
  });
});
