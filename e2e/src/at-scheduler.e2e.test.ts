/**
 * at-scheduler end to end, as it runs in a cluster: the chart is installed into the real API server by
 * helm; the controller runs from source with a kubeconfig holding only a token of the chart's
 * ServiceAccount and exactly the env of the chart's Deployment (no kubelet here: the Deployment's pods
 * never start, so this process stands in for one of them, and the test plays kubelet for the At's pod).
 */
import {
  createTestNamespace,
  eventually,
  helm,
  loadTestKubeConfig,
  type TestNamespace,
  freeLoopbackPort,
} from '@loopwright/testing';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { chartPath, normalizeRules, repoRoot, type PolicyRule } from './charts.ts';
import {
  adminKubeconfigPath,
  api,
  deploymentEnv,
  effectiveRules,
  serviceAccountKubeconfig,
  startController,
  type ControllerProcess,
  type ServiceAccountCredentials,
} from './kube.ts';
import { assertScrapedByPrometheus, promtoolCheckMetrics } from './prometheus.ts';

const expectedRules = JSON.parse(
  await readFile(new URL('../expected/at-scheduler.effective-rules.json', import.meta.url), 'utf8'),
) as {
  allNamespaces: Record<'releaseNamespace' | 'otherNamespace', PolicyRule[]>;
  watchNamespaces: Record<'releaseNamespace' | 'watchedNamespace' | 'otherNamespace', PolicyRule[]>;
  nonResource: PolicyRule[];
};

interface At {
  metadata: { name: string };
  status?: { phase?: string; outcome?: string; podName?: string; exitCode?: number };
}

// Both install modes: the default (ClusterRole) and watchNamespaces (Roles in the watched namespaces only).
for (const mode of ['allNamespaces', 'watchNamespaces'] as const)
  describe(`at-scheduler (${mode}): helm install, ServiceAccount token, real scenario`, () => {
    let admin: KubeConfig;
    let system: TestNamespace;
    let work: TestNamespace;
    let other: TestNamespace;
    let sa: ServiceAccountCredentials;
    let controller: ControllerProcess;
    let healthPort: number;
    let installOutput = '';
    const release = `at-${randomBytes(3).toString('hex')}`;
    const fullname = `${release}-at-scheduler`;
    const podName = `${fullname}-7d9f8b6c5-x2x2x`;

    // Undone in reverse order, whatever `before` got to (a failed install must not leak namespaces).
    const cleanups: (() => Promise<unknown>)[] = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    });

    before(async () => {
      admin = loadTestKubeConfig();
      system = await createTestNamespace(admin, 'e2e-at-system');
      cleanups.push(() => system.cleanup());
      work = await createTestNamespace(admin, 'e2e-at-work');
      cleanups.push(() => work.cleanup());
      other = await createTestNamespace(admin, 'e2e-at-other');
      cleanups.push(() => other.cleanup());
      healthPort = await freeLoopbackPort();
      // The chart as a user installs it; only the health port differs (a free loopback port here).
      const installed = await helm(
        [
          'install',
          release,
          chartPath('at-scheduler'),
          '--namespace',
          system.name,
          '--set-json',
          `healthPort=${healthPort}`,
          ...(mode === 'watchNamespaces'
            ? ['--set-json', `watchNamespaces=${JSON.stringify([work.name])}`]
            : []),
        ],
        { kubeconfig: adminKubeconfigPath() },
      );
      installOutput = installed.stdout;
      cleanups.push(() =>
        helm(['uninstall', release, '--namespace', system.name], { kubeconfig: adminKubeconfigPath() }),
      );
      sa = await serviceAccountKubeconfig(admin, system.name, fullname);
      cleanups.push(() => sa.remove());
      const env = await deploymentEnv(admin, system.name, fullname, podName);
      controller = startController(repoRoot, 'packages/at-scheduler/src/main.ts', {
        ...env,
        KUBECONFIG: sa.kubeconfigPath,
      });
      cleanups.push(async () => {
        await controller.stop();
        if (process.env.E2E_SHOW_OUTPUT) process.stderr.write(controller.output());
      });
      await eventually(
        async () => {
          const response = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
          assert.equal(response.status, 200);
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
      assert.match(installOutput, new RegExp(`installed as ${fullname} in ${system.name}`));
      assert.match(
        installOutput,
        mode === 'allNamespaces' ? /Watching: all namespaces\./ : new RegExp(`Watching: ${work.name}\\.`),
      );
      await api(
        admin,
        'GET',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ats.cnat.programming-kubernetes.info',
      );
      const clusterRole = api(admin, 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${fullname}`);
      if (mode === 'allNamespaces') await clusterRole;
      else {
        await assert.rejects(clusterRole, /404/);
        await api(
          admin,
          'GET',
          `/apis/rbac.authorization.k8s.io/v1/namespaces/${work.name}/roles/${fullname}`,
        );
      }
    });

    test('an At due in a few seconds runs once in a pod and ends DONE/Succeeded', async () => {
      const schedule = new Date(Date.now() + 4000).toISOString();
      await api(
        admin,
        'POST',
        `/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/${work.name}/ats`,
        {
          apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
          kind: 'At',
          metadata: { name: 'hello' },
          spec: { schedule, command: 'echo hello from e2e' },
        },
      );
      const atPath = `/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/${work.name}/ats/hello`;
      await eventually(
        async () => {
          assert.equal((await api<At>(admin, 'GET', atPath)).status?.phase, 'PENDING');
        },
        {
          timeoutMs: 10_000,
        },
      );
      // Not before its time.
      assert.ok(Date.now() < Date.parse(schedule));
      await eventually(
        async () => {
          assert.equal((await api<At>(admin, 'GET', atPath)).status?.phase, 'RUNNING');
        },
        {
          timeoutMs: 20_000,
          intervalMs: 200,
        },
      );
      assert.ok(Date.now() >= Date.parse(schedule));
      // RUNNING is recorded before the pod is created (at most once), so the pod follows shortly.
      let command: string[] | undefined;
      await eventually(
        async () => {
          const pod = await api<{ spec: { containers: { command: string[] }[] } }>(
            admin,
            'GET',
            `/api/v1/namespaces/${work.name}/pods/hello-pod`,
          );
          command = pod.spec.containers[0]?.command;
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      assert.deepEqual(command, ['/bin/sh', '-c', 'echo hello from e2e']);
      // Play kubelet: the command container terminated with exit code 0.
      const now = new Date().toISOString();
      await api(
        admin,
        'PATCH',
        `/api/v1/namespaces/${work.name}/pods/hello-pod/status`,
        {
          status: {
            phase: 'Succeeded',
            containerStatuses: [
              {
                name: 'command',
                image: 'busybox:1.37.0',
                imageID: '',
                ready: false,
                restartCount: 0,
                state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
              },
            ],
          },
        },
        'application/merge-patch+json',
      );
      await eventually(
        async () => {
          const at = await api<At>(admin, 'GET', atPath);
          assert.equal(at.status?.phase, 'DONE');
          assert.equal(at.status.outcome, 'Succeeded');
          assert.equal(at.status.exitCode, 0);
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      // Events were written with the ServiceAccount's rights (events.k8s.io create).
      await eventually(async () => {
        const events = await api<{ items: { reason: string; regarding: { name: string } }[] }>(
          admin,
          'GET',
          `/apis/events.k8s.io/v1/namespaces/${work.name}/events`,
        );
        const reasons = events.items.filter((e) => e.regarding.name === 'hello').map((e) => e.reason);
        for (const reason of ['Scheduled', 'Started', 'Succeeded'])
          assert.ok(reasons.includes(reason), reason);
      });
      // Leader election ran with the name-scoped Lease rule: this replica holds the chart's Lease.
      const lease = await api<{ spec: { holderIdentity: string } }>(
        admin,
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/${system.name}/leases/at-scheduler`,
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
      if (mode === 'allNamespaces') {
        const expected = expectedRules.allNamespaces;
        assert.deepEqual(await rulesIn(system.name), normalizeRules(expected.releaseNamespace));
        assert.deepEqual(await rulesIn(work.name), normalizeRules(expected.otherNamespace));
        assert.deepEqual(await rulesIn(other.name), normalizeRules(expected.otherNamespace));
      } else {
        const expected = expectedRules.watchNamespaces;
        assert.deepEqual(await rulesIn(system.name), normalizeRules(expected.releaseNamespace));
        assert.deepEqual(await rulesIn(work.name), normalizeRules(expected.watchedNamespace));
        assert.deepEqual(await rulesIn(other.name), normalizeRules(expected.otherNamespace));
      }
    });

    // One Prometheus run is enough; the metrics do not depend on the RBAC mode.
    if (mode === 'allNamespaces')
      test('Prometheus scrapes the controller: target up, reconcile and workqueue samples', async () => {
        await assertScrapedByPrometheus({
          job: 'at-scheduler',
          port: healthPort,
          controllers: ['at-scheduler'],
        });
      });

    test('promtool check metrics passes on /metrics', async () => {
      const result = await promtoolCheckMetrics(`http://127.0.0.1:${healthPort}/metrics`);
      assert.equal(result.findings, '');
      assert.equal(result.exitCode, 0);
    });

    test('no 403 and no secret in the controller output', () => {
      const output = controller.output();
      assert.ok(output.length > 0);
      assert.doesNotMatch(output, /\b403\b|forbidden/i);
      assert.ok(!output.includes(sa.token), 'the ServiceAccount token appears in the output');
    });
  });
