/**
 * A running At whose pod goes away from under the in-process controller, on a real control plane:
 * deleted, or out of the controller's pod cache (its label removed).
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { atTestbed } from './at-controller.test-support.ts';
import { UNCACHED_POD_RECHECK_MS } from './decide.ts';
import { MANAGED_BY_LABEL } from './resource.ts';

describe('at-scheduler on a real control plane: pods that go away', () => {
  const bed = atTestbed('at-pod-gone');
  const { createAt, getAt, podsOf, getPod, eventsFor, kubelet } = bed;

  it('a pod deleted while running ends the At Failed/PodDisappeared, and no second pod is ever created', async () => {
    const at = await createAt('vanishing', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('vanishing-pod'));
    await kubelet('vanishing-pod', 'Running');
    await bed.pods.delete({ namespace: bed.ns.name, name: 'vanishing-pod' });
    await eventually(async () => {
      assert.equal((await getAt('vanishing')).status?.phase, 'DONE');
    });
    const done = await getAt('vanishing');
    assert.deepEqual([done.status?.outcome, done.status?.reason], ['Failed', 'PodDisappeared']);
    await eventually(async () => {
      assert.ok(
        (await eventsFor('vanishing')).some((e) => e.reason === 'PodDisappeared' && e.type === 'Warning'),
      );
    });
    await sleep(500);
    assert.equal((await podsOf(at)).length, 0);
    assert.equal(bed.controller.starts.filter((s) => s.name === 'vanishing').length, 1);
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
  });
});
