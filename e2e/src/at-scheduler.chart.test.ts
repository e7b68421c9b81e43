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

const chart = 'at-scheduler';
const expected = JSON.parse(
  await readFile(new URL('../expected/at-scheduler.rbac.json', import.meta.url), 'utf8'),
) as { controller: PolicyRule[]; leaderElection: PolicyRule[] };

const rules = (m: Manifest) => normalizeRules(m.rules as PolicyRule[]);

describe('at-scheduler chart', () => {
  test('helm lint passes, also with --strict', async () => {
    await helm(['lint', chartPath(chart)]);
    await helm(['lint', '--strict', chartPath(chart)]);
  });

  test('default render: exactly these objects, CRD from crds/, RBAC as expected', async () => {
    const manifests = await render(chart);
    assert.deepEqual(kinds(manifests), [
      'ClusterRole/rel-at-scheduler',
      'ClusterRoleBinding/rel-at-scheduler',
      'CustomResourceDefinition/ats.cnat.programming-kubernetes.info',
      'Deployment/controllers/rel-at-scheduler',
      'Role/controllers/rel-at-scheduler-leader-election',
      'RoleBinding/controllers/rel-at-scheduler-leader-election',
      'Service/controllers/rel-at-scheduler-metrics',
      'ServiceAccount/controllers/rel-at-scheduler',
    ]);
    await assertCrdsFromSource(chart, manifests);
    assert.deepEqual(rules(one(manifests, 'ClusterRole')), normalizeRules(expected.controller));
    assert.deepEqual(rules(one(manifests, 'Role')), normalizeRules(expected.leaderElection));
    assertNoBroadRules(manifests);
    assertBindings(manifests, 'rel-at-scheduler', 'controllers');
  });

  test('default Deployment: 2 replicas, leader election, restricted, probes, image, env', async () => {
    const manifests = await render(chart);
    const deployment = one(manifests, 'Deployment');
    const spec = deployment.spec as { replicas: number; template: { spec: Record<string, unknown> } };
    assert.equal(spec.replicas, 2);
    assert.equal(spec.template.spec.serviceAccountName, 'rel-at-scheduler');
    assertRestrictedPod(deployment);
    assertPorts(deployment, { metrics: 8080, probes: 8081 });
    const container = controllerContainer(deployment);
    assert.equal(container.image, `ghcr.io/loopwright/at-scheduler:${await appVersion(chart)}`);
    assert.deepEqual(container.resources, {
      requests: { cpu: '50m', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
    const env = envOf(container);
    assert.deepEqual(env, {
      POD_NAME: JSON.stringify({ fieldRef: { fieldPath: 'metadata.name' } }),
      POD_NAMESPACE: JSON.stringify({ fieldRef: { fieldPath: 'metadata.namespace' } }),
      WORKERS: '16',
      DEFAULT_IMAGE: 'busybox:1.37.0',
      LEADER_ELECT: 'true',
      LEADER_ELECTION_NAMESPACE: 'controllers',
      LEADER_ELECTION_ID: 'at-scheduler',
      METRICS_BIND_ADDRESS: ':8080',
      HEALTH_PROBE_BIND_ADDRESS: ':8081',
      KUBE_API_QPS: '-1',
      KUBE_API_BURST: '1000',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    assertEnvKnownToController(env, chart);
    const service = one(manifests, 'Service');
    assert.deepEqual((service.spec as { ports: unknown }).ports, [
      { name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
    ]);
  });

  test('every configuration value reaches its env var', async () => {
    const deployment = one(
      await render(chart, {
        values: {
          workers: 7,
          defaultImage: 'busybox@sha256:' + 'a'.repeat(64),
          'leaderElection.leaseName': 'my-lease',
          metricsPort: 9090,
          probePort: 9091,
          // A decimal, as client-go's QPS is a float.
          'kubeApi.qps': 12.5,
          'kubeApi.burst': 80,
          logLevel: 'debug',
          logFormat: 'console',
          extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' }],
        },
      }),
      'Deployment',
    );
    const env = envOf(controllerContainer(deployment));
    assert.equal(env.WORKERS, '7');
    assert.equal(env.DEFAULT_IMAGE, 'busybox@sha256:' + 'a'.repeat(64));
    assert.equal(env.LEADER_ELECTION_ID, 'my-lease');
    assert.equal(env.KUBE_API_QPS, '12.5');
    assert.equal(env.KUBE_API_BURST, '80');
    assert.equal(env.LOG_LEVEL, 'debug');
    assert.equal(env.LOG_FORMAT, 'console');
    assert.equal(env.NODE_OPTIONS, '--max-old-space-size=200');
    assertPorts(deployment, { metrics: 9090, probes: 9091 });
  });

  test('leaseName scopes the Lease rule to that name', async () => {
    const manifests = await render(chart, { values: { 'leaderElection.leaseName': 'my-lease' } });
    const leaseRules = one(manifests, 'Role').rules as PolicyRule[];
    assert.deepEqual(leaseRules[0]?.resourceNames, ['my-lease']);
  });

  test('watchNamespaces: a Role + RoleBinding per namespace, no ClusterRole, WATCH_NAMESPACE', async () => {
    const manifests = await render(chart, { values: { watchNamespaces: ['team-a', 'team-b'] } });
    assert.equal(
      manifests.filter((m) => m.kind === 'ClusterRole' || m.kind === 'ClusterRoleBinding').length,
      0,
    );
    for (const namespace of ['team-a', 'team-b']) {
      const role = one(
        manifests.filter((m) => m.metadata.namespace === namespace),
        'Role',
        'rel-at-scheduler',
      );
      assert.deepEqual(rules(role), normalizeRules(expected.controller));
      one(
        manifests.filter((m) => m.metadata.namespace === namespace),
        'RoleBinding',
        'rel-at-scheduler',
      );
    }
    // The Lease stays in the release namespace.
    assert.deepEqual(
      rules(one(manifests, 'Role', 'rel-at-scheduler-leader-election')),
      normalizeRules(expected.leaderElection),
    );
    assertBindings(manifests, 'rel-at-scheduler', 'controllers');
    assertNoBroadRules(manifests);
    assert.equal(envOf(controllerContainer(one(manifests, 'Deployment'))).WATCH_NAMESPACE, 'team-a,team-b');
  });

  test('leader election off: one replica, no Lease Role, LEADER_ELECT=false; two replicas refused', async () => {
    const manifests = await render(chart, { values: { 'leaderElection.enabled': false, replicaCount: 1 } });
    assert.equal(manifests.filter((m) => m.metadata.name.endsWith('leader-election')).length, 0);
    const env = envOf(controllerContainer(one(manifests, 'Deployment')));
    assert.equal(env.LEADER_ELECT, 'false');
    assert.equal(env.LEADER_ELECTION_ID, undefined);
    await assert.rejects(render(chart, { values: { 'leaderElection.enabled': false } }), (error: unknown) => {
      assert.ok(error instanceof HelmError);
      assert.match(error.stderr, /needs replicaCount 1/);
      return true;
    });
  });

  test('ServiceMonitor, PodMonitor and PodDisruptionBudget are off by default and rendered when enabled', async () => {
    const manifests = await render(chart, {
      values: {
        'serviceMonitor.enabled': true,
        'serviceMonitor.labels': { release: 'prom' },
        'serviceMonitor.interval': '15s',
        'podMonitor.enabled': true,
        'podDisruptionBudget.enabled': true,
      },
    });
    const sm = one(manifests, 'ServiceMonitor');
    assert.equal(sm.metadata.labels?.release, 'prom');
    assert.deepEqual((sm.spec as { endpoints: unknown }).endpoints, [
      { port: 'metrics', path: '/metrics', interval: '15s' },
    ]);
    const service = one(manifests, 'Service');
    assert.deepEqual(
      (sm.spec as { selector: { matchLabels: unknown } }).selector.matchLabels,
      (service.spec as { selector: unknown }).selector,
    );
    const pm = one(manifests, 'PodMonitor');
    assert.deepEqual((pm.spec as { podMetricsEndpoints: unknown }).podMetricsEndpoints, [
      { port: 'metrics', path: '/metrics', interval: '30s' },
    ]);
    const pdb = one(manifests, 'PodDisruptionBudget');
    assert.equal((pdb.spec as { minAvailable: number }).minAvailable, 1);
    const maxUnavailable = one(
      await render(chart, {
        values: { 'podDisruptionBudget.enabled': true, 'podDisruptionBudget.maxUnavailable': '50%' },
      }),
      'PodDisruptionBudget',
    );
    assert.deepEqual(maxUnavailable.spec, {
      maxUnavailable: '50%',
      selector: {
        matchLabels: { 'app.kubernetes.io/name': 'at-scheduler', 'app.kubernetes.io/instance': 'rel' },
      },
    });
  });

  test('scheduling and pod values: priorityClassName, nodeSelector, tolerations, affinity, labels, pull secrets', async () => {
    const affinity = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
    };
    const deployment = one(
      await render(chart, {
        values: {
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
          affinity,
          podAnnotations: { a: 'b' },
          podLabels: { team: 'platform' },
          imagePullSecrets: [{ name: 'regcred' }],
          resources: { requests: { cpu: '1' } },
          'image.digest': 'sha256:' + 'b'.repeat(64),
        },
      }),
      'Deployment',
    );
    const template = (
      deployment.spec as {
        template: {
          metadata: Manifest['metadata'] & { annotations?: unknown };
          spec: Record<string, unknown>;
        };
      }
    ).template;
    assert.equal(template.spec.priorityClassName, 'system-cluster-critical');
    assert.deepEqual(template.spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
    assert.deepEqual(template.spec.tolerations, [
      { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    assert.deepEqual(template.spec.affinity, affinity);
    assert.deepEqual(template.spec.imagePullSecrets, [{ name: 'regcred' }]);
    assert.deepEqual(template.metadata.annotations, { a: 'b' });
    assert.equal(template.metadata.labels?.team, 'platform');
    const container = controllerContainer(deployment);
    // Maps merge with the defaults (helm semantics): the request changes, the memory settings stay.
    assert.deepEqual(container.resources, {
      requests: { cpu: '1', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
    assert.equal(container.image, 'ghcr.io/loopwright/at-scheduler@sha256:' + 'b'.repeat(64));
    // The default affinity spreads replicas across nodes.
    const defaults = one(await render(chart), 'Deployment');
    assert.ok(
      (defaults.spec as { template: { spec: { affinity: { podAntiAffinity?: unknown } } } }).template.spec
        .affinity.podAntiAffinity,
    );
  });

  test('an existing ServiceAccount, and rbac.create=false', async () => {
    const manifests = await render(chart, {
      values: { 'serviceAccount.create': false, 'serviceAccount.name': 'mine' },
    });
    assert.equal(manifests.filter((m) => m.kind === 'ServiceAccount').length, 0);
    assertBindings(manifests, 'mine', 'controllers');
    const noRbac = await render(chart, { values: { 'rbac.create': false } });
    assert.equal(noRbac.filter((m) => m.apiVersion.startsWith('rbac.')).length, 0);
  });

  test('terminationGracePeriodSeconds: 60 by default (reconcile grace, then the Lease release), configurable', async () => {
    const gracePeriod = async (values: Record<string, unknown>) =>
      (
        one(await render(chart, { values }), 'Deployment').spec as {
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
      'workers="ten"',
      'replicaCount="2"',
      'watchNamespaces="team-a"',
      'watchNamespaces=["Not_A_Namespace"]',
      'serviceMonitor.enabled="yes"',
      'leaderElection.enabled="true"',
      'metricsPort=70000',
      'probePort=0',
      // The program refuses 0 (not client-go's "some default") and anything below -1.
      'kubeApi.qps=0',
      'kubeApi.qps=-2',
      'kubeApi.qps=-0.5',
      'kubeApi.qps=100000.5',
      'logLevel="loud"',
      'unknownValue=1',
    ])
      await assertSchemaRejects(chart, set);
  });
});
