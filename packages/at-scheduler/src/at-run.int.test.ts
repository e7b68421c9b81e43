/**
 * Running an At with the in-process controller on a real kube-apiserver + etcd +
 * kube-controller-manager (garbage collection runs; no kubelet: the testbed's `kubelet()` plays its part
 * by writing pod status through pods/status): the pod it runs in, the outcome it records, what happens
 * after it finished.
 */
import { KubeApiError } from '@loopwright/runtime';
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { atTestbed, condition } from './at-controller.test-support.ts';
import type { At } from './generated/types.ts';

describe('at-scheduler on a real control plane: running an At', () => {
  const bed = atTestbed('at');
  const { createAt, getAt, podsOf, getPod, eventsFor, kubelet } = bed;

  it("applies the book's sample unchanged; a past schedule runs at once in a locked-down pod; success is recorded", async () => {
    // The book's manifest as printed, sent the way `kubectl apply --server-side -f` sends it.
    const bookSample = [
      'apiVersion: cnat.programming-kubernetes.info/v1alpha1',
      'kind: At',
      'metadata: {name: example-at}',
      'spec: {schedule: "2019-04-12T10:12:00Z", command: "echo YAY"}',
      '',
    ].join('\n');
    const sample = parse(bookSample) as At;
    // kubectl names the namespace of its context, as here.
    const at = await bed.ats.apply(
      { ...sample, metadata: { ...sample.metadata, namespace: bed.ns.name } },
      { fieldManager: 'kubectl' },
    );
    await eventually(async () => {
      assert.equal((await getAt('example-at')).status?.phase, 'RUNNING');
    });
    const recorded = await getAt('example-at');
    assert.equal(recorded.status?.podName, 'example-at-pod');
    assert.equal(condition(recorded, 'Scheduled'), 'True');
    await eventually(async () => {
      assert.equal((await podsOf(at)).length, 1);
    });
    // Admitted under the namespace's enforced restricted profile, which does refuse a default pod:
    await assert.rejects(
      bed.pods.create(
        {
          metadata: { name: 'unrestricted', namespace: bed.ns.name },
          spec: { containers: [{ name: 'c', image: 'busybox:1.37.0' }] },
        },
        { dryRun: true },
      ),
      (error: unknown) => error instanceof KubeApiError && error.reason === 'Forbidden',
    );
    const pod = await getPod('example-at-pod');
    const spec = pod.spec as {
      restartPolicy: string;
      automountServiceAccountToken: boolean;
      securityContext: { runAsNonRoot: boolean; runAsUser: number };
      containers: [{ command: string[]; image: string; securityContext: unknown }];
    };
    assert.deepEqual(spec.containers[0].command, ['/bin/sh', '-c', 'echo YAY']);
    assert.equal(spec.containers[0].image, 'busybox:1.37.0');
    assert.equal(spec.restartPolicy, 'Never');
    assert.equal(spec.automountServiceAccountToken, false);
    assert.equal(spec.securityContext.runAsNonRoot, true);
    assert.deepEqual(
      pod.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]),
      [['At', 'example-at', at.metadata?.uid, true, true]],
    );

    await kubelet('example-at-pod', 'Running');
    await kubelet('example-at-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(async () => {
      assert.equal((await getAt('example-at')).status?.phase, 'DONE');
    });
    const done = await getAt('example-at');
    assert.equal(done.status?.outcome, 'Succeeded');
    assert.equal(done.status.exitCode, 0);
    assert.equal(done.status.reason, 'Completed');
    assert.ok(done.status.completionTime && done.status.startTime);
    assert.equal(condition(done, 'Succeeded'), 'True');
    assert.equal(condition(done, 'Running'), 'False');
    await eventually(async () => {
      assert.deepEqual((await eventsFor('example-at')).map((e) => e.reason).sort(), ['Started', 'Succeeded']);
    });

    // Spec changes after DONE do nothing.
    await bed.ats.patch(
      { namespace: bed.ns.name, name: 'example-at' },
      { merge: { spec: { schedule: '2019-04-12T10:13:00Z' } } },
    );
    await sleep(500);
    assert.equal((await getAt('example-at')).status?.phase, 'DONE');
    assert.equal((await podsOf(at)).length, 1);
  });

  it('passes a command with quotes, pipes and && verbatim as the third element of the container command', async () => {
    const command = `printf '%s\\n' "a  b" | tr a A && echo "it's \\"quoted\\"" ; exit 0`;
    await createAt('quoting', { schedule: '2019-04-12T10:12:00Z', command });
    await eventually(async () => {
      const pod = await getPod('quoting-pod');
      assert.deepEqual((pod.spec as { containers: [{ command: string[] }] }).containers[0].command, [
        '/bin/sh',
        '-c',
        command,
      ]);
    });
  });

  it('records a failing command as DONE/Failed with its exit code, reason and message', async () => {
    await createAt('failing', { schedule: '2019-04-12T10:12:00Z', command: 'exit 3' });
    await eventually(() => getPod('failing-pod'));
    await kubelet('failing-pod', 'Failed', { exitCode: 3, reason: 'Error', message: 'boom' });
    await eventually(async () => {
      assert.equal((await getAt('failing')).status?.phase, 'DONE');
    });
    const done = await getAt('failing');
    assert.deepEqual(
      [done.status?.outcome, done.status?.exitCode, done.status?.reason, done.status?.message],
      ['Failed', 3, 'Error', 'boom'],
    );
    assert.equal(condition(done, 'Failed'), 'True');
    await eventually(async () => {
      assert.ok((await eventsFor('failing')).some((e) => e.reason === 'Failed' && e.type === 'Warning'));
    });
  });

  it('an edited RUNNING or DONE At records each new generation as observed (status and conditions) with one write, and does not run again', async () => {
    const writes = (): number => bed.controller.statusWrites.get('edited') ?? 0;
    const edit = async (command: string, expectedGeneration: number, writesBefore: number): Promise<void> => {
      const edited = await bed.ats.patch(
        { namespace: bed.ns.name, name: 'edited' },
        { merge: { spec: { command } } },
      );
      assert.equal(edited.metadata?.generation, expectedGeneration);
      await eventually(async () => {
        const at = await getAt('edited');
        assert.equal(at.status?.observedGeneration, expectedGeneration);
        assert.ok(at.status.conditions?.length);
        for (const c of at.status.conditions) assert.equal(c.observedGeneration, expectedGeneration, c.type);
      });
      await eventually(() => {
        assert.equal(writes(), writesBefore + 1);
      });
      // The write's own watch event reconciles the At again: it must find nothing more to write.
      await sleep(1000);
      assert.equal(writes(), writesBefore + 1, 'one status write per generation');
    };

    await createAt('edited', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('edited-pod'));
    await kubelet('edited-pod', 'Running');
    // RUNNING recorded: one write.
    await eventually(() => {
      assert.equal(writes(), 1);
    });
    await edit('sleep 60', 2, 1);
    assert.equal((await getAt('edited')).status?.phase, 'RUNNING');

    await kubelet('edited-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(async () => {
      assert.equal((await getAt('edited')).status?.phase, 'DONE');
    });
    await eventually(() => {
      assert.equal(writes(), 3);
    });
    await edit('echo edited', 3, 3);
    const done = await getAt('edited');
    assert.deepEqual([done.status?.phase, done.status?.outcome], ['DONE', 'Succeeded']);
    assert.equal(bed.controller.starts.filter((s) => s.name === 'edited').length, 1);
    assert.equal((await podsOf(done)).length, 1);
  });

  it('deletes the finished pod after ttlSecondsAfterFinished and keeps the At', async () => {
    const at = await createAt('ttl', {
      schedule: '2019-04-12T10:12:00Z',
      command: 'true',
      ttlSecondsAfterFinished: 1,
    });
    await eventually(() => getPod('ttl-pod'));
    await kubelet('ttl-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 0);
      },
      { timeoutMs: 5000 },
    );
    assert.equal((await getAt('ttl')).status?.outcome, 'Succeeded');
  });

  // Last: the garbage collector discovers a new CRD's resource only on its periodic resync (~30 s).
  it('deleting an At deletes its pod (garbage collection through the owner reference)', async () => {
    const at = await getAt('example-at');
    assert.equal((await podsOf(at)).length, 1);
    await bed.ats.delete({ namespace: bed.ns.name, name: 'example-at' });
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 0);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  });
});
