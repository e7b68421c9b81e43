/**
 * More than one in-process controller over the same Ats on a real control plane: one restarted mid-run,
 * and two active at once without leader election.
 */
import { KubeClient } from '@loopwright/runtime';
import { createTestNamespace, eventually, loadTestKubeConfig } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startController } from './at-controller.test-support.ts';
import type { At } from './generated/types.ts';
import { AT_RESOURCE, AT_UID_LABEL, POD_RESOURCE, POD_SELECTOR, type Pod } from './resource.ts';
import { installAtCrd } from './crd.test-support.ts';

/** What the kubelet would write when the command exits 0 (no kubelet runs here). */
async function markSucceeded(client: KubeClient, namespace: string, pod: string): Promise<void> {
  const terminated = { exitCode: 0, reason: 'Completed' };
  const command = { name: 'command', image: 'busybox:1.37.0', imageID: '', ready: false, restartCount: 0 };
  await client.resource<Pod>(POD_RESOURCE).status.patch(
    { namespace, name: pod },
    {
      merge: { status: { phase: 'Succeeded', containerStatuses: [{ ...command, state: { terminated } }] } },
    },
  );
}

describe('at-scheduler restarted mid-run', () => {
  it('a new controller picks up the RUNNING At, records the outcome, and creates no second pod', async () => {
    const kc = loadTestKubeConfig();
    const client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    const ns = await createTestNamespace(kc, 'at-restart');
    const ats = client.resource<At>(AT_RESOURCE);
    const pods = client.resource<Pod>(POD_RESOURCE);
    try {
      const first = startController(kc, ns.name);
      const at = await ats.create({
        apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
        kind: 'At',
        metadata: { name: 'restart', namespace: ns.name },
        spec: { schedule: '2019-04-12T10:12:00Z', command: 'sleep 5' },
      });
      await eventually(async () => {
        assert.equal((await ats.get({ namespace: ns.name, name: 'restart' })).status?.phase, 'RUNNING');
      });
      await eventually(() => pods.get({ namespace: ns.name, name: 'restart-pod' }));
      await first.stop();

      // While no controller runs, the pod finishes.
      await markSucceeded(client, ns.name, 'restart-pod');
      const second = startController(kc, ns.name);
      try {
        await eventually(async () => {
          assert.equal((await ats.get({ namespace: ns.name, name: 'restart' })).status?.outcome, 'Succeeded');
        });
        assert.equal(first.starts.length + second.starts.length, 1);
        const started = await pods.list({
          namespace: ns.name,
          labelSelector: `${POD_SELECTOR},${AT_UID_LABEL}=${at.metadata?.uid ?? ''}`,
        });
        assert.equal(started.items.length, 1);
      } finally {
        await second.stop();
      }
    } finally {
      await ns.cleanup();
      await client.close();
    }
  });
});

describe('two active controllers on the same Ats (no leader election)', () => {
  it('each At starts exactly once: the resourceVersion precondition lets one of them create the pod, and the other does not misreport it', async () => {
    const kc = loadTestKubeConfig();
    const client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    const ns = await createTestNamespace(kc, 'at-race');
    const ats = client.resource<At>(AT_RESOURCE);
    const pods = client.resource<Pod>(POD_RESOURCE);
    const first = startController(kc, ns.name);
    const second = startController(kc, ns.name);
    try {
      const names = Array.from({ length: 8 }, (_, i) => `race-${i}`);
      await Promise.all(
        names.map((name) =>
          ats.create({
            apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
            kind: 'At',
            metadata: { name, namespace: ns.name },
            spec: { schedule: '2019-04-12T10:12:00Z', command: 'true' },
          }),
        ),
      );
      for (const name of names) {
        await eventually(() => pods.get({ namespace: ns.name, name: `${name}-pod` }));
        await markSucceeded(client, ns.name, `${name}-pod`);
      }
      for (const name of names) {
        await eventually(async () => {
          assert.equal((await ats.get({ namespace: ns.name, name })).status?.outcome, 'Succeeded');
        });
        assert.equal([...first.starts, ...second.starts].filter((s) => s.name === name).length, 1, name);
      }
      const started = await pods.list({ namespace: ns.name, labelSelector: POD_SELECTOR });
      assert.equal(started.items.length, names.length);
    } finally {
      await first.stop();
      await second.stop();
      await ns.cleanup();
      await client.close();
    }
  });
});
