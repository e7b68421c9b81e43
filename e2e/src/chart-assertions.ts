/**
 * Assertions shared by both charts' tests: the things every Loopwright chart must get right.
 */
import { helm, HelmError } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  chartPath,
  controllerContainer,
  envOf,
  one,
  repoRoot,
  type ChartName as Chart,
  type Manifest,
  type PolicyRule,
} from './charts.ts';

export async function appVersion(chart: Chart): Promise<string> {
  const meta = parse(await readFile(join(chartPath(chart), 'Chart.yaml'), 'utf8')) as { appVersion: string };
  return meta.appVersion;
}

/** The restricted Pod Security profile, with the fixed UID the images use. */
export function assertRestrictedPod(deployment: Manifest): void {
  const pod = (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec;
  assert.deepEqual(pod.securityContext, {
    runAsNonRoot: true,
    runAsUser: 65532,
    runAsGroup: 65532,
    fsGroup: 65532,
    seccompProfile: { type: 'RuntimeDefault' },
  });
  const container = controllerContainer(deployment);
  assert.deepEqual(container.securityContext, {
    runAsNonRoot: true,
    runAsUser: 65532,
    runAsGroup: 65532,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  });
}

/** /metrics on the `metrics` port, the probes on the `probes` port: controller-runtime's two addresses. */
export function assertPorts(deployment: Manifest, ports: { metrics: number; probes: number }): void {
  const container = controllerContainer(deployment);
  assert.deepEqual(container.ports, [
    { name: 'metrics', containerPort: ports.metrics, protocol: 'TCP' },
    { name: 'probes', containerPort: ports.probes, protocol: 'TCP' },
  ]);
  const liveness = container.livenessProbe as { httpGet: unknown };
  const readiness = container.readinessProbe as { httpGet: unknown };
  assert.deepEqual(liveness.httpGet, { path: '/healthz', port: 'probes' });
  assert.deepEqual(readiness.httpGet, { path: '/readyz', port: 'probes' });
  const env = envOf(container);
  assert.equal(env.METRICS_BIND_ADDRESS, `:${ports.metrics}`);
  assert.equal(env.HEALTH_PROBE_BIND_ADDRESS, `:${ports.probes}`);
}

/** No `*` anywhere, no Secrets in any cluster-wide rule, no CRD or webhook writes. */
export function assertNoBroadRules(manifests: Manifest[]): void {
  for (const m of manifests.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role')) {
    for (const rule of m.rules as PolicyRule[]) {
      for (const list of [rule.apiGroups, rule.resources, rule.verbs, rule.resourceNames])
        assert.ok(!(list ?? []).includes('*'), `${m.kind} ${m.metadata.name} has a wildcard`);
      if (m.kind === 'ClusterRole')
        assert.ok(!(rule.resources ?? []).includes('secrets'), 'Secrets granted cluster-wide');
      assert.ok(!(rule.apiGroups ?? []).includes('apiextensions.k8s.io'), 'CRD access granted');
      assert.ok(!(rule.apiGroups ?? []).includes('admissionregistration.k8s.io'), 'webhook access granted');
    }
  }
}

/** Bindings point at the chart's ServiceAccount in the release namespace and at a rendered role. */
export function assertBindings(manifests: Manifest[], serviceAccount: string, namespace: string): void {
  const bindings = manifests.filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding');
  assert.ok(bindings.length > 0);
  for (const binding of bindings) {
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: serviceAccount, namespace }]);
    const ref = binding.roleRef as { kind: string; name: string };
    one(
      manifests.filter(
        (m) => m.metadata.namespace === binding.metadata.namespace || m.kind === 'ClusterRole',
      ),
      ref.kind,
      ref.name,
    );
  }
}

/** The CRDs come from crds/ unchanged, and no template carries a copy. */
export async function assertCrdsFromSource(chart: Chart, manifests: Manifest[]): Promise<void> {
  const dir = join(chartPath(chart), 'crds');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const rendered = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
  assert.equal(rendered.length, files.length);
  for (const file of files) {
    const source = parse(await readFile(join(dir, file), 'utf8')) as Manifest;
    assert.deepEqual(one(rendered, 'CustomResourceDefinition', source.metadata.name), source);
  }
  for (const template of await readdir(join(chartPath(chart), 'templates')))
    assert.doesNotMatch(
      await readFile(join(chartPath(chart), 'templates', template), 'utf8'),
      /CustomResourceDefinition/,
      template,
    );
}

/** Every env var the chart sets is one the controller's config parser reads (a typo would be silently ignored). */
/** Every variable the chart sets is one the controller's `--help` lists (its declared options). */
export function assertEnvKnownToController(env: Record<string, string>, controller: Chart): void {
  const main = join(repoRoot, 'packages', controller, 'src', 'main.ts');
  const help = execFileSync(process.execPath, ['--conditions=development', main, '--help'], {
    encoding: 'utf8',
  }).replace(/\n {8}/g, ' ');
  const known = new Set(
    [
      ...help.matchAll(/^ {2}--\S+(?: \S+)? {2}\(([A-Z][A-Z0-9_]*)\) |value itself in ([A-Z][A-Z0-9_]*)/gm),
    ].map(([, variable, secret]) => variable ?? secret),
  );
  for (const name of Object.keys(env))
    assert.ok(known.has(name), `${name} is not an option of ${controller}`);
}

/** helm template and helm lint both fail, naming the schema. */
export async function assertSchemaRejects(
  chart: Chart,
  set: string,
  extraArgs: string[] = [],
): Promise<void> {
  // helm lint has no --api-versions (it renders without asking a cluster what it serves).
  const lintArgs = extraArgs.filter(
    (arg, i) => arg !== '--api-versions' && extraArgs[i - 1] !== '--api-versions',
  );
  for (const [command, args] of [
    [['template', 'rel'], extraArgs],
    [['lint'], lintArgs],
  ] as const) {
    await assert.rejects(
      helm([...command, chartPath(chart), ...args, '--set-json', set]),
      (error: unknown) => {
        assert.ok(error instanceof HelmError);
        assert.match(error.stderr + error.stdout, /schema/i, `${command[0]} ${set}`);
        return true;
      },
    );
  }
}

/** A chart without CRDs: none rendered (even with --include-crds), no crds/ directory, none in a template. */
export async function assertNoCrds(chart: Chart, manifests: Manifest[]): Promise<void> {
  assert.deepEqual(
    manifests.filter((m) => m.kind === 'CustomResourceDefinition'),
    [],
  );
  assert.ok(!(await readdir(chartPath(chart))).includes('crds'), `${chart} has a crds/ directory`);
  for (const template of await readdir(join(chartPath(chart), 'templates')))
    assert.doesNotMatch(
      await readFile(join(chartPath(chart), 'templates', template), 'utf8'),
      /CustomResourceDefinition/,
      template,
    );
}
