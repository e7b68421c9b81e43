/**
 * `helm test` as a user runs it after an install or upgrade: the chart's test hook (the library chart's
 * templates/_test.tpl) runs a Pod of the controller's own image that checks, from inside the cluster,
 * that the chart's CRDs are served, that the leader-election Lease is held and renewed by one of the
 * release's running pods, and that /metrics answers on the metrics Service. It prints one `ok: ...` or
 * `FAILED: ...` line per check; `--logs` puts them into helm's output (once per test hook: helm asks for
 * the logs of a Pod named like each hook, and the hook's ServiceAccount, Role and RoleBinding share the
 * Pod's name).
 */
import { helm, HelmError } from '@loopwright/cluster';
import { readCrdDirectory } from '@loopwright/envtest';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chartPath, type ChartName } from './charts.ts';
import { adminKubeconfigPath, objectExists, resource } from './kube.ts';
import { describeObject, PODS, ROLE_BINDINGS, ROLES, SERVICE_ACCOUNTS, type ObjectRef } from './resources.ts';

interface HelmTestRun {
  /** helm exited 0: every test hook succeeded. */
  passed: boolean;
  /** helm's stdout (the release status, then the test Pod's log) and stderr (its error). */
  output: string;
}

/** `helm test <release> --namespace <namespace> --logs` with the suite's kubeconfig; never throws for a failed test. */
async function helmTest(release: string, namespace: string): Promise<HelmTestRun> {
  const args = ['test', release, '--namespace', namespace, '--logs', '--timeout', '2m'];
  try {
    const { stdout, stderr } = await helm(args, { kubeconfig: adminKubeconfigPath(), timeoutMs: 150_000 });
    return { passed: true, output: `${stdout}\n${stderr}` };
  } catch (error) {
    if (!(error instanceof HelmError) || error.exitCode === null) throw error;
    return { passed: false, output: `${error.stdout}\n${error.stderr}` };
  }
}

interface HelmTestExpectation {
  /** The chart under charts/: the CRDs of its crds/ directory must be reported served. */
  chart: ChartName;
  /** The chart's fullname: its `<fullname>-metrics` Service must answer. */
  fullname: string;
  /** `leaderElection.leaseName`: its holder must be a running pod of the release. */
  lease: string;
  /**
   * The release runs sharded (`sharding.enabled`): instead of the leader's Lease, each of its `replicas`
   * running pods must hold a renewed member Lease of `ring`.
   */
  sharded?: { ring: string; replicas: number };
}

/** `<plural>.<group>/<version>` of every served version of every CRD in the chart's crds/ directory. */
function servedCrdResources(chart: ChartName): string[] {
  return readCrdDirectory(join(chartPath(chart), 'crds')).flatMap((crd) =>
    crd.spec.versions
      .filter((version) => version.served)
      .map((version) => `${crd.spec.names.plural}.${crd.spec.group}/${version.name}`),
  );
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `helm test` passes, its output holds the `ok:` line of every check (each CRD of the chart served,
 * the Lease held by a running pod and renewed, /metrics answering on the metrics Service) and no
 * `FAILED:` line, and the hook's objects are gone afterwards (hook-succeeded): nothing of the test is
 * left to the release's uninstall. Resolves with helm's output.
 */
export async function assertHelmTestPasses(
  admin: KubeConfig,
  release: string,
  namespace: string,
  expected: HelmTestExpectation,
): Promise<string> {
  const { passed, output } = await helmTest(release, namespace);
  assert.ok(passed, `helm test ${release} failed:\n${output}`);
  assert.match(output, /^Phase:\s+Succeeded$/m, output);
  const lines = [
    ...servedCrdResources(expected.chart).map((resource) => `ok: ${escape(resource)} is served`),
    ...(expected.sharded
      ? ['ok: a replica is running \\(selector .+\\)']
      : [
          `ok: Lease ${escape(`${namespace}/${expected.lease}`)} is held by one of the running pods .+ \\(holder: .+\\)`,
          'ok: the Lease was renewed within its duration \\(at .+\\)',
        ]),
    `ok: http://\\S+/metrics \\(Service ${escape(`${expected.fullname}-metrics`)}\\) answers with metrics`,
  ];
  for (const line of lines) assert.match(output, new RegExp(`^${line}$`, 'm'), output);
  if (expected.sharded) {
    const member = new RegExp(
      `^ok: pod \\S+ holds a member Lease of ring ${escape(expected.sharded.ring)}, renewed within its duration \\(.+\\)$`,
      'gm',
    );
    // helm prints the hook's log once per test hook object: count the pods, not the lines.
    const pods = new Set(output.match(member)?.map((line) => line.split(' ')[2]));
    assert.equal(pods.size, expected.sharded.replicas, output);
  }
  assert.doesNotMatch(output, /^FAILED:/m, output);
  await assertHookObjectsGone(admin, namespace, `${expected.fullname}-test`);
  return output;
}

/**
 * `helm test` fails, and its output names the checks that failed: a `FAILED:` line matching each of
 * `failures`. Resolves with helm's output.
 */
export async function assertHelmTestFails(
  release: string,
  namespace: string,
  failures: RegExp[],
): Promise<string> {
  const { passed, output } = await helmTest(release, namespace);
  assert.equal(passed, false, `helm test ${release} passed:\n${output}`);
  const failed = output.split('\n').filter((line) => line.startsWith('FAILED: '));
  for (const failure of failures)
    assert.ok(
      failed.some((line) => failure.test(line)),
      `no FAILED line matches ${String(failure)}:\n${output}`,
    );
  return output;
}

/** The test hook's Pod, ServiceAccount, Role and RoleBinding (all named `<fullname>-test`). */
function hookObjects(namespace: string, name: string): ObjectRef[] {
  return [PODS, SERVICE_ACCOUNTS, ROLES, ROLE_BINDINGS].map((type) => ({ type, key: { namespace, name } }));
}

/** The test hook's Pod, ServiceAccount, Role and RoleBinding are deleted. */
async function assertHookObjectsGone(admin: KubeConfig, namespace: string, name: string): Promise<void> {
  for (const object of hookObjects(namespace, name))
    assert.equal(
      await objectExists(admin, object),
      false,
      `${describeObject(object)} is left after helm test passed`,
    );
}

/**
 * Deletes what a failed `helm test` leaves behind: its Pod (kept for `kubectl logs`) and, had helm been
 * stopped half-way, the ServiceAccount, Role and RoleBinding. `helm uninstall` never deletes test hooks.
 * For the suites' cleanups; absent objects are fine.
 */
export async function deleteHelmTestLeftovers(
  admin: KubeConfig,
  namespace: string,
  fullname: string,
): Promise<void> {
  // `delete` resolves false for an object that is gone.
  for (const { type, key } of hookObjects(namespace, `${fullname}-test`))
    await resource(admin, type).delete(key);
}
