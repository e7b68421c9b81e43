/**
 * A running At whose pod goes away from under the in-process controller, on a real control plane:
 * deleted, evicted, its At deleted, or out of the controller's pod cache (its label removed). The
 * outcome finalizer holds a deleted pod until the At has recorded how it ended; none is left behind.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { atTestbed } from './at-controller.test-support.ts';
import { START_GRACE_MS, UNCACHED_POD_RECHECK_MS } from './decide.ts';
import type { At } from './generated/types.ts';
import { AT_OUTCOME_FINALIZER, MANAGED_BY_LABEL } from './resource.ts';

describe('at-scheduler on a real control plane: pods that go away', () => {
  const bed = atTestbed('at-pod-gone');
  const { createAt, getAt, podsOf, getPod, eventsFor, kubelet } = bed;

  /** The At ended Failed/PodDeleted from its pod being deleted; then released, the pod is gone, and none other came. */
  async function assertEndedByDeletion(name: string, at: At): Promise<void> {
    await eventually(async () => {
      assert.equal((await getAt(name)).status?.phase, 'DONE');
    });
    const done = await getAt(name);
    assert.deepEqual([done.status?.outcome, done.status?.reason], ['Failed', 'PodDeleted']);
    await eventually(async () => {
      assert.ok((await eventsFor(name)).some((e) => e.reason === 'Failed' && e.type === 'Warning'));
      assert.equal((await podsOf(at)).length, 0, 'released, the pod goes');
    });
    await sleep(500);
    assert.equal((await podsOf(at)).length, 0);
    assert.equal(bed.controller.starts.filter((s) => s.name === name).length, 1);
  }

  it('a pod deleted while running ends the At Failed/PodDeleted, the pod goes, and no second pod is ever created', async () => {
    const at = await createAt('vanishing', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('vanishing-pod'));
    await kubelet('vanishing-pod', 'Running');
    await bed.pods.delete({ namespace: bed.ns.name, name: 'vanishing-pod' });
    await assertEndedByDeletion('vanishing', at);
  });

  it('a pod evicted (Eviction API) while running ends the same way, with no finalizer left', async () => {
    const at = await createAt('evicted', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('evicted-pod'));
    await kubelet('evicted-pod', 'Running');
    await bed.pods.subresource('eviction').create({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'evicted-pod', namespace: bed.ns.name },
    });
    await assertEndedByDeletion('evicted', at);
  });

  /** The claim a replica leaves when it dies between its two requests: RUNNING, and no pod. */
  async function leaveClaimWithoutPod(name: string, podFinalizer?: string): Promise<At> {
    const at = await createAt(name, { schedule: '2099-01-01T00:00:00Z', command: 'true' });
    await bed.ats.status.patch(
      { namespace: bed.ns.name, name },
      {
        merge: {
          status: {
            phase: 'RUNNING',
            observedGeneration: 1,
            podName: `${name}-pod`,
            startTime: new Date().toISOString(),
            ...(podFinalizer ? { podFinalizer } : {}),
          },
        },
      },
    );
    return at;
  }

  it('a claim left without its pod (its writer died before the create): the pod is created after the grace, once', async () => {
    const at = await leaveClaimWithoutPod('interrupted', AT_OUTCOME_FINALIZER);
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
      },
      { timeoutMs: START_GRACE_MS + 10_000, intervalMs: 250 },
    );
    assert.deepEqual((await getPod('interrupted-pod')).metadata?.finalizers, [AT_OUTCOME_FINALIZER]);
    const claimed = await getAt('interrupted');
    assert.deepEqual(
      [claimed.status?.phase, claimed.status?.podFinalizer],
      ['RUNNING', AT_OUTCOME_FINALIZER],
    );
    await sleep(START_GRACE_MS + 1_000);
    assert.equal((await podsOf(at)).length, 1);
    assert.equal(bed.controller.starts.filter((s) => s.name === 'interrupted').length, 1);
  });

  it("an earlier version's claim left without its pod ends Failed/PodDisappeared: its pod is never created", async () => {
    const at = await leaveClaimWithoutPod('unguarded');
    await eventually(
      async () => {
        assert.equal((await getAt('unguarded')).status?.phase, 'DONE');
      },
      { timeoutMs: START_GRACE_MS + 10_000, intervalMs: 250 },
    );
    assert.equal((await getAt('unguarded')).status?.reason, 'PodDisappeared');
    assert.equal((await podsOf(at)).length, 0);
    assert.equal(bed.controller.starts.filter((s) => s.name === 'unguarded').length, 0);
  });

  it('a running pod whose managed-by label is removed is still its pod: its outcome is recorded when it ends', async () => {
    await createAt('unlabelled', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('unlabelled-pod'));
    await kubelet('unlabelled-pod', 'Running');
    await bed.pods.patch(
      { namespace: bed.ns.name, name: 'unlabelled-pod' },
      { merge: { metadata: { labels: { [MANAGED_BY_LABEL]: null } } } },
    );
    await eventually(() => {
      assert.equal(bed.controller.podCache.get(bed.ns.name, 'unlabelled-pod'), undefined);
    });
    // The pod left the cache but exists: not PodDisappeared.
    await sleep(1000);
    assert.equal((await getAt('unlabelled')).status?.phase, 'RUNNING');

    // No pod event reaches the controller now: only its periodic live read can notice the end.
    await kubelet('unlabelled-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(
      async () => {
        const done = await getAt('unlabelled');
        assert.deepEqual([done.status?.phase, done.status?.outcome], ['DONE', 'Succeeded']);
      },
      { timeoutMs: UNCACHED_POD_RECHECK_MS + 5_000, intervalMs: 250 },
    );
    // Released from the live read: nothing holds the pod.
    await eventually(async () => {
      assert.deepEqual((await getPod('unlabelled-pod')).metadata?.finalizers ?? [], []);
    });
  });

  // Last: the garbage collector discovers a new CRD's resource only on its periodic resync (~30 s).
  it('an At deleted while its pod runs: the garbage collector deletes the pod, the controller releases it, it goes', async () => {
    const dropped = await createAt('dropped', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    const reborn = await createAt('reborn', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('dropped-pod'));
    await eventually(() => getPod('reborn-pod'));
    await kubelet('dropped-pod', 'Running');
    await bed.ats.delete({ namespace: bed.ns.name, name: 'dropped' });
    // Deleted and created again under the same name: the old pod holds the name until it is released.
    await bed.ats.delete({ namespace: bed.ns.name, name: 'reborn' });
    const again = await createAt('reborn', { schedule: '2019-04-12T10:12:00Z', command: 'true' });
    await eventually(
      async () => {
        assert.equal((await podsOf(dropped)).length, 0);
        assert.equal((await podsOf(reborn)).length, 0);
        assert.equal((await podsOf(again)).length, 1);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    assert.equal((await getAt('reborn')).status?.phase, 'RUNNING');
  });
});
