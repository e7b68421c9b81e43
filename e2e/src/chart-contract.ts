/**
 * The contract every controller chart keeps, from the library chart `loopwright-controller`: one suite,
 * registered by each chart's test file with that chart's expectations. What a chart adds on top (its
 * Secrets, its own values, its NOTES) stays in that chart's file.
 */
import { helm, HelmError } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  appVersion,
  assertBindings,
  assertCrdsFromSource,
  assertEnvKnownToController,
  assertNoBroadRules,
  assertNoCrds,
  assertPorts,
  assertRestrictedPod,
  assertSchemaRejects,
} from './chart-assertions.ts';
import {
  chartPath,
  controllerContainer,
  envOf,
  isTestHook,
  kinds,
  normalizeRules,
  one,
  render,
  type ChartName,
  type Manifest,
  type PolicyRule,
  type RenderOptions,
} from './charts.ts';
import { alertNames, promtoolCheckRules, type RuleGroup } from './prometheus-rules.ts';

/** The runtime alerts of the library chart, in the runtime group of every controller chart. */
const RUNTIME_ALERTS = [
  'LoopwrightNoLeader',
  'LoopwrightReconcileErrors',
  'LoopwrightWorkqueueDepth',
  'LoopwrightWorkqueueStuck',
  'LoopwrightInformerRelists',
  'LoopwrightInformerWatchErrors',
  'LoopwrightInformerClientErrors',
  'LoopwrightEventsDropped',
  'LoopwrightProcessRestarts',
];

export interface ChartExpectations {
  chart: ChartName;
  /** Values files every render takes: the chart's required values (its ci/*-values.yaml), if any. */
  valuesFiles?: string[];
  /** `--api-versions` every render takes: what the chart requires the cluster to serve. */
  apiVersions?: string[];
  /**
   * The default render's objects beyond the contract's own (ServiceAccount, ClusterRole and binding,
   * Lease Role and binding, Deployment, metrics Service), as `kinds()` lists them; CRDs are read from
   * the chart's crds/.
   */
  extraObjects?: string[];
  /** The defaults of workers and leaderElection.leaseName, where the chart's differ (16; the chart's name). */
  workers?: number;
  leaseName?: string;
  /** The chart offers watchNamespaces (a Role per namespace instead of the ClusterRole). */
  watchNamespaces: boolean;
  /** The chart offers sharding (its program has --sharding): else its schema rejects the value. */
  sharding: boolean;
  /**
   * The controller owns Secrets and watches them in every namespace: list and watch on Secrets in its
   * ClusterRole is then the one broad rule allowed (the expected RBAC compares it; no other verb).
   */
  readsSecretsClusterWide?: boolean;
  /** The pod spec's tolerations and volumes the chart sets itself, before those from values. */
  ownTolerations?: unknown[];
  ownVolumes?: unknown[];
  ownVolumeMounts?: unknown[];
}

/** What the controller's ClusterRole and its Lease Role grant: e2e/expected/<chart>.rbac.json. */
async function expectedRbac(chart: ChartName) {
  return JSON.parse(await readFile(new URL(`../expected/${chart}.rbac.json`, import.meta.url), 'utf8')) as {
    controller: PolicyRule[];
    leaderElection: PolicyRule[];
  };
}

const rules = (m: Manifest) => normalizeRules(m.rules as PolicyRule[]);

/**
 * `assertNoBroadRules`, but a controller that owns Secrets may list and watch them cluster-wide: its
 * ClusterRole's Secrets rules are checked to grant exactly that, then left out of the check.
 */
function assertNoBroadRulesBut(manifests: Manifest[], readsSecretsClusterWide: boolean): void {
  if (!readsSecretsClusterWide) {
    assertNoBroadRules(manifests);
    return;
  }
  const onSecrets = (rule: PolicyRule) => rule.resources?.includes('secrets') === true;
  const clusterRoles = manifests.filter((m) => m.kind === 'ClusterRole');
  for (const rule of clusterRoles.flatMap((m) => (m.rules as PolicyRule[]).filter(onSecrets)))
    assert.deepEqual(
      { ...rule, verbs: [...rule.verbs].sort() },
      { apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] },
    );
  assertNoBroadRules(
    manifests.map((m) =>
      m.kind === 'ClusterRole'
        ? { ...m, rules: (m.rules as PolicyRule[]).filter((rule) => !onSecrets(rule)) }
        : m,
    ),
  );
}

interface PodTemplate {
  metadata: Manifest['metadata'];
  spec: Record<string, unknown> & { containers: Record<string, unknown>[]; volumes?: unknown[] };
}
const podTemplate = (deployment: Manifest) => (deployment.spec as { template: PodTemplate }).template;

export function testChartContract(expectations: ChartExpectations): void {
  const { chart } = expectations;
  const fullname = `rel-${chart}`;
  const leaseName = expectations.leaseName ?? chart;
  const renderWith = (values: Record<string, unknown> = {}, options: RenderOptions = {}) =>
    render(chart, {
      valuesFiles: expectations.valuesFiles,
      apiVersions: expectations.apiVersions,
      values,
      ...options,
    });
  const valuesArgs = (expectations.valuesFiles ?? []).flatMap((file) => ['--values', file]);
  const apiVersionArgs = (expectations.apiVersions ?? []).flatMap((version) => ['--api-versions', version]);

  describe(`${chart} chart: the shared contract (loopwright-controller)`, () => {
    test('helm lint passes, also with --strict', async () => {
      await helm(['lint', chartPath(chart), ...valuesArgs]);
      await helm(['lint', '--strict', chartPath(chart), ...valuesArgs]);
    });

    test('default render: exactly these objects, CRDs from crds/, RBAC as expected', async () => {
      const manifests = await renderWith();
      const objects = manifests.filter((m) => !isTestHook(m));
      const crds = objects.filter((m) => m.kind === 'CustomResourceDefinition');
      assert.deepEqual(
        kinds(objects.filter((m) => m.kind !== 'CustomResourceDefinition')),
        [
          `ClusterRole/${fullname}`,
          `ClusterRoleBinding/${fullname}`,
          `Deployment/controllers/${fullname}`,
          `Role/controllers/${fullname}-leader-election`,
          `RoleBinding/controllers/${fullname}-leader-election`,
          `Service/controllers/${fullname}-metrics`,
          `ServiceAccount/controllers/${fullname}`,
          ...(expectations.extraObjects ?? []),
        ].sort(),
      );
      if (crds.length > 0) await assertCrdsFromSource(chart, manifests);
      else await assertNoCrds(chart, manifests);
      const expected = await expectedRbac(chart);
      assert.deepEqual(rules(one(objects, 'ClusterRole')), normalizeRules(expected.controller));
      assert.deepEqual(
        rules(one(objects, 'Role', `${fullname}-leader-election`)),
        normalizeRules(expected.leaderElection),
      );
      assertNoBroadRulesBut(objects, expectations.readsSecretsClusterWide ?? false);
      assertBindings(objects, fullname, 'controllers');
    });

    test('default Deployment: 2 replicas, restricted, probes, image, the runtime’s env, history of 10', async () => {
      const manifests = await renderWith();
      const deployment = one(manifests, 'Deployment');
      const spec = deployment.spec as { replicas: number; revisionHistoryLimit: number };
      assert.equal(spec.replicas, 2);
      assert.equal(spec.revisionHistoryLimit, 10);
      assert.equal(podTemplate(deployment).spec.serviceAccountName, fullname);
      assertRestrictedPod(deployment);
      assertPorts(deployment, { metrics: 8080, probes: 8081 });
      const container = controllerContainer(deployment);
      assert.equal(container.image, `ghcr.io/loopwright/${chart}:${await appVersion(chart)}`);
      assert.equal(container.args, undefined);
      const env = envOf(container);
      assert.deepEqual(
        {
          POD_NAME: env.POD_NAME,
          POD_NAMESPACE: env.POD_NAMESPACE,
          WORKERS: env.WORKERS,
          LEADER_ELECT: env.LEADER_ELECT,
          LEADER_ELECTION_NAMESPACE: env.LEADER_ELECTION_NAMESPACE,
          LEADER_ELECTION_ID: env.LEADER_ELECTION_ID,
          WARM_STANDBY: env.WARM_STANDBY,
          RECONCILE_TIMEOUT: env.RECONCILE_TIMEOUT,
          KUBE_API_QPS: env.KUBE_API_QPS,
          KUBE_API_BURST: env.KUBE_API_BURST,
          LOG_LEVEL: env.LOG_LEVEL,
          LOG_FORMAT: env.LOG_FORMAT,
          WATCH_NAMESPACE: env.WATCH_NAMESPACE,
        },
        {
          POD_NAME: JSON.stringify({ fieldRef: { fieldPath: 'metadata.name' } }),
          POD_NAMESPACE: JSON.stringify({ fieldRef: { fieldPath: 'metadata.namespace' } }),
          WORKERS: String(expectations.workers ?? 16),
          LEADER_ELECT: 'true',
          LEADER_ELECTION_NAMESPACE: 'controllers',
          LEADER_ELECTION_ID: leaseName,
          WARM_STANDBY: 'true',
          // Unset: the controller's own default.
          RECONCILE_TIMEOUT: undefined,
          KUBE_API_QPS: '-1',
          KUBE_API_BURST: '1000',
          LOG_LEVEL: 'info',
          LOG_FORMAT: 'json',
          WATCH_NAMESPACE: undefined,
        },
      );
      assertEnvKnownToController(env, chart);
      assert.deepEqual((one(manifests, 'Service').spec as { ports: unknown }).ports, [
        { name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
      ]);
    });

    test('every runtime value reaches its env var', async () => {
      const deployment = one(
        await renderWith({
          workers: 7,
          'leaderElection.leaseName': 'my-lease',
          'leaderElection.warmStandby': false,
          reconcileTimeout: '1m30s',
          metricsPort: 9090,
          probePort: 9091,
          // A decimal, as client-go's QPS is a float.
          'kubeApi.qps': 12.5,
          'kubeApi.burst': 80,
          logLevel: 'debug',
          logFormat: 'console',
          extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' }],
        }),
        'Deployment',
      );
      const env = envOf(controllerContainer(deployment));
      assert.equal(env.WORKERS, '7');
      assert.equal(env.LEADER_ELECTION_ID, 'my-lease');
      assert.equal(env.WARM_STANDBY, 'false');
      assert.equal(env.RECONCILE_TIMEOUT, '1m30s');
      assert.equal(env.KUBE_API_QPS, '12.5');
      assert.equal(env.KUBE_API_BURST, '80');
      assert.equal(env.LOG_LEVEL, 'debug');
      assert.equal(env.LOG_FORMAT, 'console');
      assert.equal(env.NODE_OPTIONS, '--max-old-space-size=200');
      assertPorts(deployment, { metrics: 9090, probes: 9091 });
    });

    test('leaseName scopes the Lease rule to that name', async () => {
      const manifests = await renderWith({ 'leaderElection.leaseName': 'my-lease' });
      const leaseRules = one(manifests, 'Role', `${fullname}-leader-election`).rules as PolicyRule[];
      assert.deepEqual(leaseRules[0]?.resourceNames, ['my-lease']);
    });

    if (expectations.watchNamespaces)
      test('watchNamespaces: a Role + RoleBinding per namespace, no ClusterRole, WATCH_NAMESPACE', async () => {
        const manifests = (await renderWith({ watchNamespaces: ['team-a', 'team-b'] })).filter(
          (m) => !isTestHook(m),
        );
        assert.equal(
          manifests.filter((m) => m.kind === 'ClusterRole' || m.kind === 'ClusterRoleBinding').length,
          0,
        );
        const expected = await expectedRbac(chart);
        for (const namespace of ['team-a', 'team-b']) {
          const inNamespace = manifests.filter((m) => m.metadata.namespace === namespace);
          assert.deepEqual(rules(one(inNamespace, 'Role', fullname)), normalizeRules(expected.controller));
          one(inNamespace, 'RoleBinding', fullname);
        }
        // The Lease stays in the release namespace.
        assert.deepEqual(
          rules(one(manifests, 'Role', `${fullname}-leader-election`)),
          normalizeRules(expected.leaderElection),
        );
        assertBindings(manifests, fullname, 'controllers');
        assertNoBroadRules(manifests);
        assert.equal(
          envOf(controllerContainer(one(manifests, 'Deployment'))).WATCH_NAMESPACE,
          'team-a,team-b',
        );
      });

    test('leader election off: one replica, no Lease Role, LEADER_ELECT=false; two replicas refused', async () => {
      const manifests = await renderWith({ 'leaderElection.enabled': false, replicaCount: 1 });
      assert.equal(manifests.filter((m) => m.metadata.name.endsWith('leader-election')).length, 0);
      const env = envOf(controllerContainer(one(manifests, 'Deployment')));
      assert.equal(env.LEADER_ELECT, 'false');
      assert.equal(env.LEADER_ELECTION_ID, undefined);
      assert.equal(env.LEADER_ELECTION_NAMESPACE, undefined);
      assert.equal(env.WARM_STANDBY, undefined, 'without leader election there is no standby');
      // The hook then checks no Lease, and may not read one.
      const hookRole = one(manifests.filter(isTestHook), 'Role');
      assert.ok(!(hookRole.rules as PolicyRule[]).some((rule) => rule.resources?.includes('leases')));
      await assert.rejects(renderWith({ 'leaderElection.enabled': false }), (error: unknown) => {
        assert.ok(error instanceof HelmError);
        assert.match(error.stderr, /leaderElection.enabled=false needs replicaCount 1: \S/);
        return true;
      });
    });

    if (expectations.sharding) {
      const shardingOn = { 'sharding.enabled': true, 'leaderElection.enabled': false, replicaCount: 3 };
      test('sharding on: SHARDING and the ring (the full name by default), a member-Lease Role with exactly the verbs the runtime uses, no leader-election Role', async () => {
        const manifests = await renderWith(shardingOn);
        const objects = manifests.filter((m) => !isTestHook(m));
        assert.equal(objects.filter((m) => m.metadata.name.endsWith('leader-election')).length, 0);
        const role = one(objects, 'Role', `${fullname}-sharding`);
        assert.equal(role.metadata.namespace, 'controllers');
        // Member Leases are named per pod identity: no resourceNames; list and watch by label, no get.
        assert.deepEqual(
          rules(role),
          normalizeRules([
            {
              apiGroups: ['coordination.k8s.io'],
              resources: ['leases'],
              verbs: ['list', 'watch', 'create', 'update', 'delete'],
            },
          ]),
        );
        one(objects, 'RoleBinding', `${fullname}-sharding`);
        assertBindings(objects, fullname, 'controllers');
        const deployment = one(objects, 'Deployment');
        assert.equal((deployment.spec as { replicas: number }).replicas, 3);
        const env = envOf(controllerContainer(deployment));
        assert.deepEqual(
          {
            SHARDING: env.SHARDING,
            SHARDING_RING: env.SHARDING_RING,
            LEADER_ELECT: env.LEADER_ELECT,
            LEADER_ELECTION_ID: env.LEADER_ELECTION_ID,
            WARM_STANDBY: env.WARM_STANDBY,
          },
          {
            SHARDING: 'true',
            SHARDING_RING: fullname,
            LEADER_ELECT: 'false',
            LEADER_ELECTION_ID: undefined,
            WARM_STANDBY: undefined,
          },
        );
        assertEnvKnownToController(env, chart);
        const ring = envOf(
          controllerContainer(
            one(await renderWith({ ...shardingOn, 'sharding.ring': 'my-ring' }), 'Deployment'),
          ),
        );
        assert.equal(ring.SHARDING_RING, 'my-ring');
        // Off (the default): no sharding env, no member-Lease Role.
        const off = await renderWith();
        assert.equal(envOf(controllerContainer(one(off, 'Deployment'))).SHARDING, undefined);
        assert.equal(off.filter((m) => m.metadata.name.endsWith('-sharding')).length, 0);
      });

      test('sharding on: the helm test hook lists the ring’s Leases and the pods, and reads no leader Lease', async () => {
        const hooks = (await renderWith(shardingOn)).filter(isTestHook);
        assert.deepEqual(
          rules(one(hooks, 'Role')),
          normalizeRules([
            { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list'] },
            { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
            {
              apiGroups: [''],
              resources: ['services'],
              resourceNames: [`${fullname}-metrics`],
              verbs: ['get'],
            },
          ]),
        );
        const container = (
          one(hooks, 'Pod').spec as { containers: { env: { name: string; value: string }[] }[] }
        ).containers[0];
        const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
        assert.equal(env.LEASE_NAME, '');
        assert.equal(env.SHARDING_RING, fullname);
      });

      test('sharding and leader election both on: refused, saying which to turn off', async () => {
        await assert.rejects(renderWith({ 'sharding.enabled': true }), (error: unknown) => {
          assert.ok(error instanceof HelmError);
          assert.match(
            error.stderr,
            /sharding\.enabled=true replaces leader election: set leaderElection\.enabled=false/,
          );
          return true;
        });
      });
    }

    test('ServiceMonitor, PodMonitor and PodDisruptionBudget are off by default and rendered when enabled', async () => {
      const off = await renderWith();
      for (const kind of ['ServiceMonitor', 'PodMonitor', 'PodDisruptionBudget'])
        assert.equal(off.filter((m) => m.kind === kind).length, 0, kind);
      const manifests = await renderWith({
        'serviceMonitor.enabled': true,
        'serviceMonitor.labels': { release: 'prom' },
        'serviceMonitor.interval': '15s',
        'podMonitor.enabled': true,
        'podDisruptionBudget.enabled': true,
      });
      const sm = one(manifests, 'ServiceMonitor');
      assert.equal(sm.metadata.labels?.release, 'prom');
      assert.deepEqual((sm.spec as { endpoints: unknown }).endpoints, [
        { port: 'metrics', path: '/metrics', interval: '15s' },
      ]);
      assert.deepEqual(
        (sm.spec as { selector: { matchLabels: unknown } }).selector.matchLabels,
        (one(manifests, 'Service').spec as { selector: unknown }).selector,
      );
      const pm = one(manifests, 'PodMonitor');
      assert.deepEqual((pm.spec as { podMetricsEndpoints: unknown }).podMetricsEndpoints, [
        { port: 'metrics', path: '/metrics', interval: '30s' },
      ]);
      const selector = {
        matchLabels: { 'app.kubernetes.io/name': chart, 'app.kubernetes.io/instance': 'rel' },
      };
      assert.deepEqual(one(manifests, 'PodDisruptionBudget').spec, { minAvailable: 1, selector });
      const maxUnavailable = one(
        await renderWith({
          'podDisruptionBudget.enabled': true,
          'podDisruptionBudget.maxUnavailable': '50%',
        }),
        'PodDisruptionBudget',
      );
      assert.deepEqual(maxUnavailable.spec, { maxUnavailable: '50%', selector });
    });

    test('PrometheusRule: off by default; on: named for the release, its labels, the runtime group first, every series of this release only', async () => {
      assert.equal((await renderWith()).filter((m) => m.kind === 'PrometheusRule').length, 0);
      const manifests = await renderWith({
        'prometheusRule.enabled': true,
        'prometheusRule.labels': { release: 'prom' },
      });
      const rule = one(manifests, 'PrometheusRule');
      assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
      assert.deepEqual(
        { name: rule.metadata.name, namespace: rule.metadata.namespace },
        { name: fullname, namespace: 'controllers' },
      );
      assert.equal(rule.metadata.labels?.release, 'prom');
      assert.equal(rule.metadata.labels['app.kubernetes.io/instance'], 'rel');
      const { groups } = rule.spec as { groups: RuleGroup[] };
      assert.equal(groups[0]?.name, `${fullname}.runtime`);
      assert.deepEqual(alertNames(groups.slice(0, 1)), RUNTIME_ALERTS);
      assert.ok(groups.length <= 2, 'the runtime group and the controller’s own');
      // Every selector of every expression starts with this release's namespace and pods.
      const releaseOnly = `{namespace="controllers", pod=~"${fullname}-[a-z0-9]+-[a-z0-9]+"`;
      for (const { alert, expr } of groups.flatMap((group) => group.rules)) {
        const selectors = expr.match(/[a-z_]+\{[^}]*/g) ?? [];
        assert.ok(selectors.length > 0, `${alert}: ${expr}`);
        for (const selector of selectors)
          assert.ok(selector.includes(releaseOnly), `${alert} selects beyond the release: ${selector}`);
      }
      await promtoolCheckRules(groups);
    });

    test('dashboards: off by default; on: one ConfigMap of dashboards/*.json, labelled for the Grafana sidecar', async () => {
      assert.equal((await renderWith()).filter((m) => m.kind === 'ConfigMap').length, 0);
      const dashboardsDir = join(chartPath(chart), 'dashboards');
      const files = existsSync(dashboardsDir)
        ? readdirSync(dashboardsDir).filter((file) => file.endsWith('.json'))
        : [];
      const configMaps = (
        await renderWith({
          'dashboards.enabled': true,
          'dashboards.label': 'dashboards',
          'dashboards.labelValue': 'loopwright',
          'dashboards.annotations': { grafana_folder: 'Loopwright' },
        })
      ).filter((m) => m.kind === 'ConfigMap' && !isTestHook(m));
      // Without a dashboard there is nothing to load: no ConfigMap.
      if (files.length === 0) {
        assert.equal(configMaps.length, 0);
        return;
      }
      const configMap = one(configMaps, 'ConfigMap', `${fullname}-dashboards`);
      assert.equal(configMap.metadata.namespace, 'controllers');
      assert.equal(configMap.metadata.labels?.dashboards, 'loopwright');
      assert.deepEqual(configMap.metadata.annotations, { grafana_folder: 'Loopwright' });
      const data = configMap.data as Record<string, string>;
      assert.deepEqual(Object.keys(data).sort(), files.sort());
      for (const file of files)
        assert.deepEqual(
          JSON.parse(data[file] ?? ''),
          JSON.parse(readFileSync(join(dashboardsDir, file), 'utf8')),
        );
      const byDefault = one(await renderWith({ 'dashboards.enabled': true }), 'ConfigMap');
      assert.equal(byDefault.metadata.labels?.grafana_dashboard, '1');
    });

    test('placement and pod values: priorityClassName, nodeSelector, tolerations after the chart’s own, affinity, labels, annotations, pull secrets, resources, digest', async () => {
      const affinity = {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
      };
      const toleration = { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' };
      const deployment = one(
        await renderWith({
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [toleration],
          affinity,
          podAnnotations: { a: 'b' },
          podLabels: { team: 'platform' },
          imagePullSecrets: [{ name: 'regcred' }],
          resources: { requests: { cpu: '1' } },
          'image.digest': 'sha256:' + 'b'.repeat(64),
        }),
        'Deployment',
      );
      const template = podTemplate(deployment);
      assert.equal(template.spec.priorityClassName, 'system-cluster-critical');
      assert.deepEqual(template.spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
      assert.deepEqual(template.spec.tolerations, [...(expectations.ownTolerations ?? []), toleration]);
      assert.deepEqual(template.spec.affinity, affinity);
      assert.deepEqual(template.spec.imagePullSecrets, [{ name: 'regcred' }]);
      assert.equal((template.metadata.annotations ?? {}).a, 'b');
      assert.equal(template.metadata.labels?.team, 'platform');
      const container = controllerContainer(deployment);
      const defaultDeployment = one(await renderWith(), 'Deployment');
      const defaults = controllerContainer(defaultDeployment);
      // Maps merge with the defaults (helm semantics): the request changes, the rest stays.
      const defaultResources = defaults.resources as { requests?: object; limits?: object };
      assert.deepEqual(container.resources, {
        ...defaultResources,
        requests: { ...defaultResources.requests, cpu: '1' },
      });
      assert.equal(container.image, `ghcr.io/loopwright/${chart}@sha256:` + 'b'.repeat(64));
      // The default affinity spreads replicas across nodes.
      const defaultAffinity = podTemplate(defaultDeployment).spec.affinity as {
        podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution: { podAffinityTerm: unknown }[] };
      };
      assert.deepEqual(defaultAffinity.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution, [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: {
              matchLabels: { 'app.kubernetes.io/name': chart, 'app.kubernetes.io/instance': 'rel' },
            },
          },
        },
      ]);
    });

    test('an existing ServiceAccount, and rbac.create=false (then no RBAC object at all, and no test hook)', async () => {
      const manifests = await renderWith({ 'serviceAccount.create': false, 'serviceAccount.name': 'mine' });
      assert.equal(manifests.filter((m) => m.kind === 'ServiceAccount' && !isTestHook(m)).length, 0);
      assert.equal(podTemplate(one(manifests, 'Deployment')).spec.serviceAccountName, 'mine');
      assertBindings(
        manifests.filter((m) => !isTestHook(m)),
        'mine',
        'controllers',
      );
      const noRbac = await renderWith({ 'rbac.create': false });
      assert.equal(noRbac.filter((m) => m.apiVersion.startsWith('rbac.')).length, 0);
      assert.equal(noRbac.filter(isTestHook).length, 0);
    });

    test('terminationGracePeriodSeconds: 60 by default (reconcile grace, then the Lease release), configurable', async () => {
      const gracePeriod = async (values: Record<string, unknown>) =>
        podTemplate(one(await renderWith(values), 'Deployment')).spec.terminationGracePeriodSeconds;
      assert.equal(await gracePeriod({}), 60);
      assert.equal(await gracePeriod({ terminationGracePeriodSeconds: 90 }), 90);
    });

    test('revisionHistoryLimit reaches the Deployment (0 too: no old ReplicaSet kept)', async () => {
      for (const limit of [3, 0]) {
        const deployment = one(await renderWith({ revisionHistoryLimit: limit }), 'Deployment');
        assert.equal((deployment.spec as { revisionHistoryLimit: number }).revisionHistoryLimit, limit);
      }
    });

    test('commonLabels on every object, hooks and Secrets included; not in any selector', async () => {
      const manifests = await renderWith({ commonLabels: { team: 'platform', 'cost-center': '42' } });
      for (const m of manifests.filter((x) => x.kind !== 'CustomResourceDefinition')) {
        assert.equal(m.metadata.labels?.team, 'platform', `${m.kind} ${m.metadata.name}`);
        assert.equal(m.metadata.labels['cost-center'], '42', `${m.kind} ${m.metadata.name}`);
      }
      const deployment = one(manifests, 'Deployment');
      assert.equal(podTemplate(deployment).metadata.labels?.team, 'platform');
      const selector = (deployment.spec as { selector: { matchLabels: Record<string, string> } }).selector;
      assert.equal(selector.matchLabels.team, undefined);
    });

    test('securityContext overrides: keys merge into the restricted defaults, null removes one', async () => {
      const deployment = one(
        await renderWith({
          podSecurityContext: {
            runAsUser: null,
            runAsGroup: null,
            fsGroup: null,
            fsGroupChangePolicy: 'OnRootMismatch',
          },
          securityContext: { runAsUser: null, runAsGroup: null, readOnlyRootFilesystem: false },
        }),
        'Deployment',
      );
      assert.deepEqual(podTemplate(deployment).spec.securityContext, {
        runAsNonRoot: true,
        fsGroupChangePolicy: 'OnRootMismatch',
        seccompProfile: { type: 'RuntimeDefault' },
      });
      assert.deepEqual(controllerContainer(deployment).securityContext, {
        runAsNonRoot: true,
        readOnlyRootFilesystem: false,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
    });

    test('extraArgs become the container’s args; extraVolumes and extraVolumeMounts follow the chart’s own', async () => {
      const volume = { name: 'ca', configMap: { name: 'corporate-ca' } };
      const mount = { name: 'ca', mountPath: '/etc/ssl/corporate', readOnly: true };
      const deployment = one(
        await renderWith({
          extraArgs: ['--log-level=debug', '--kube-api-burst=50'],
          extraVolumes: [volume],
          extraVolumeMounts: [mount],
        }),
        'Deployment',
      );
      const container = controllerContainer(deployment);
      assert.deepEqual(container.args, ['--log-level=debug', '--kube-api-burst=50']);
      assert.equal(container.command, undefined, 'the image’s entrypoint runs the controller');
      const tmp = { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } };
      assert.deepEqual(podTemplate(deployment).spec.volumes, [
        tmp,
        ...(expectations.ownVolumes ?? []),
        volume,
      ]);
      assert.deepEqual(container.volumeMounts, [
        { name: 'tmp', mountPath: '/tmp' },
        ...(expectations.ownVolumeMounts ?? []),
        mount,
      ]);
    });

    test('topologySpreadConstraints: a constraint without a labelSelector spreads this release’s pods', async () => {
      const own = { matchLabels: { app: 'other' } };
      const spec = podTemplate(
        one(
          await renderWith({
            topologySpreadConstraints: [
              { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
              {
                maxSkew: 2,
                topologyKey: 'kubernetes.io/hostname',
                whenUnsatisfiable: 'DoNotSchedule',
                labelSelector: own,
              },
            ],
          }),
          'Deployment',
        ),
      ).spec;
      assert.deepEqual(spec.topologySpreadConstraints, [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: {
            matchLabels: { 'app.kubernetes.io/name': chart, 'app.kubernetes.io/instance': 'rel' },
          },
        },
        {
          maxSkew: 2,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: own,
        },
      ]);
      assert.equal(
        podTemplate(one(await renderWith(), 'Deployment')).spec.topologySpreadConstraints,
        undefined,
      );
    });

    test('networkPolicy: none by default; enabled, ingress only to the metrics and probes ports, from the given peers and the test pod; egress only when given', async () => {
      const defaults = await renderWith();
      assert.equal(defaults.filter((m) => m.kind === 'NetworkPolicy').length, 0);
      const selector = {
        matchLabels: { 'app.kubernetes.io/name': chart, 'app.kubernetes.io/instance': 'rel' },
      };
      const ports = [
        { port: 'metrics', protocol: 'TCP' },
        { port: 'probes', protocol: 'TCP' },
      ];
      const open = one(await renderWith({ 'networkPolicy.enabled': true }), 'NetworkPolicy');
      assert.equal(open.metadata.name, fullname);
      assert.deepEqual(open.spec, { podSelector: selector, policyTypes: ['Ingress'], ingress: [{ ports }] });
      const prometheus = {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
      };
      const egress = [{ ports: [{ port: 6443, protocol: 'TCP' }] }];
      const closed = one(
        await renderWith({
          'networkPolicy.enabled': true,
          'networkPolicy.ingressFrom': [prometheus],
          'networkPolicy.egress': egress,
        }),
        'NetworkPolicy',
      );
      const testPod = one(defaults.filter(isTestHook), 'Pod');
      assert.deepEqual(closed.spec, {
        podSelector: selector,
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            ports,
            from: [
              prometheus,
              {
                podSelector: {
                  matchLabels: {
                    'app.kubernetes.io/name': testPod.metadata.labels?.['app.kubernetes.io/name'],
                    'app.kubernetes.io/instance': 'rel',
                  },
                },
              },
            ],
          },
        ],
        egress,
      });
    });

    test('helm test: a hook Pod on the controller’s image, its own ServiceAccount and a Role that reads only what it checks', async () => {
      const manifests = await renderWith();
      const hooks = manifests.filter(isTestHook);
      const name = `${fullname}-test`;
      assert.deepEqual(kinds(hooks), [
        `Pod/controllers/${name}`,
        `Role/controllers/${name}`,
        `RoleBinding/controllers/${name}`,
        `ServiceAccount/controllers/${name}`,
      ]);
      const pod = one(hooks, 'Pod');
      const deployment = one(manifests, 'Deployment');
      // Not adopted by the controller's ReplicaSet: its selector must not match the test Pod.
      const selector = (deployment.spec as { selector: { matchLabels: Record<string, string> } }).selector;
      assert.ok(
        Object.entries(selector.matchLabels).some(([key, value]) => pod.metadata.labels?.[key] !== value),
        'the Deployment’s selector matches the test Pod',
      );
      const podSpec = pod.spec as {
        serviceAccountName: string;
        restartPolicy: string;
        securityContext: unknown;
        containers: {
          image: string;
          command: string[];
          env: { name: string; value: string }[];
          securityContext: unknown;
        }[];
      };
      assert.equal(podSpec.serviceAccountName, name);
      assert.equal(podSpec.restartPolicy, 'Never');
      assert.deepEqual(podSpec.securityContext, podTemplate(deployment).spec.securityContext);
      const [container] = podSpec.containers;
      assert.equal(container?.image, controllerContainer(deployment).image);
      assert.deepEqual(container.securityContext, controllerContainer(deployment).securityContext);
      assert.deepEqual(container.command.slice(0, 2), ['/nodejs/bin/node', '--eval']);
      const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]));
      assert.equal(env.LEASE_NAME, leaseName);
      assert.equal(env.METRICS_SERVICE, `${fullname}-metrics`);
      // Every served version of every CRD, as discovery lists it.
      const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
      const served = crds.flatMap((crd) => {
        const spec = crd.spec as {
          group: string;
          names: { plural: string };
          versions: { name: string; served: boolean }[];
        };
        return spec.versions
          .filter((v) => v.served)
          .map((v) => `${spec.group}/${v.name}/${spec.names.plural}`);
      });
      assert.deepEqual(env.CRDS ? env.CRDS.split(',') : [], served);
      assert.deepEqual(
        rules(one(hooks, 'Role')),
        normalizeRules([
          {
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            resourceNames: [leaseName],
            verbs: ['get'],
          },
          { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
          {
            apiGroups: [''],
            resources: ['services'],
            resourceNames: [`${fullname}-metrics`],
            verbs: ['get'],
          },
        ]),
      );
      const binding = one(hooks, 'RoleBinding');
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name, namespace: 'controllers' }]);
      for (const hook of hooks) {
        assert.equal(
          hook.metadata.annotations?.['helm.sh/hook-delete-policy'],
          'before-hook-creation,hook-succeeded',
        );
        // The account and its grant exist before the Pod that uses them.
        assert.equal(hook.metadata.annotations['helm.sh/hook-weight'], hook.kind === 'Pod' ? '0' : '-10');
      }
      assert.equal(manifests.filter((m) => m.kind === 'ClusterRole' && isTestHook(m)).length, 0);
      assert.equal((await renderWith({}, { skipTests: true })).filter(isTestHook).length, 0);
      assert.equal((await renderWith({ 'helmTest.enabled': false })).filter(isTestHook).length, 0);
    });

    test('values.schema.json rejects wrong types (helm template and helm lint fail)', async () => {
      for (const set of [
        'terminationGracePeriodSeconds="60"',
        'terminationGracePeriodSeconds=0',
        'workers="ten"',
        'workers=0',
        'workers=1001',
        'replicaCount="2"',
        'serviceMonitor.enabled="yes"',
        'leaderElection.enabled="true"',
        'leaderElection.warmStandby="false"',
        'reconcileTimeout="90"',
        'reconcileTimeout="1m30"',
        // A bare 0 is a number: the controller would get its default, not "no limit" ('0' is).
        'reconcileTimeout=0',
        'metricsPort=70000',
        'probePort=0',
        // The program refuses 0 (not client-go's "some default") and anything below -1.
        'kubeApi.qps=0',
        'kubeApi.qps=-2',
        'kubeApi.qps=-0.5',
        'kubeApi.qps=100000.5',
        'logLevel="loud"',
        'unknownValue=1',
        'commonLabels={"team":1}',
        'revisionHistoryLimit=-1',
        'extraArgs=["log-level=debug"]',
        'extraVolumeMounts=[{"name":"ca"}]',
        'topologySpreadConstraints=[{"maxSkew":1}]',
        'networkPolicy.enabled="yes"',
        'networkPolicy.ingress=[]',
        'helmTest.enabled="yes"',
        'prometheusRule.enabled="yes"',
        'prometheusRule.reconcileErrorRatio=2',
        'prometheusRule.workqueueDepth=-1',
        'prometheusRule.processRestarts=0',
        'prometheusRule.labels={"team":1}',
        // The sidecar matches label values as strings: an unquoted 1 would never match.
        'dashboards.labelValue=1',
        'dashboards.label=""',
        ...(expectations.watchNamespaces
          ? ['watchNamespaces="team-a"', 'watchNamespaces=["Not_A_Namespace"]']
          : // Its kinds are cluster-scoped: there is no namespace to watch.
            ['watchNamespaces=["team-a"]']),
        ...(expectations.sharding
          ? [
              'sharding.enabled="true"',
              'sharding.ring="Not a label value!"',
              `sharding.ring="${'a'.repeat(64)}"`,
            ]
          : // Its program has no --sharding: the value would be ignored, so the schema refuses it.
            ['sharding={"enabled":true}']),
      ])
        await assertSchemaRejects(chart, set, [...valuesArgs, ...apiVersionArgs]);
    });
  });
}
