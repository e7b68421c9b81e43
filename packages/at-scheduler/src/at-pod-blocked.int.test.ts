/**
 * An At whose pod cannot be created, with the in-process controller on a real control plane: its name is
 * taken by a foreign pod, or the API server refuses the pod. Reported, retried later, never in a loop.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { atTestbed, condition } from './at-controller.test-support.ts';
import { AT_UID_LABEL } from './resource.ts';

describe('at-scheduler on a real control plane: pods that cannot be created', () => {
  const bed = atTestbed('at-pod-blocked');
  const { createAt, getAt, podsOf, getPod, eventsFor } = bed;

  it('never adopts a foreign pod holding the pod name: condition + Event; runs once the name is free', async () => {
    await bed.pods.create({
      metadata: { name: 'squatted-pod', namespace: bed.ns.name, labels: { app: 'someone-else' } },
      spec: {
        securityContext: {
          runAsNonRoot: true,
          runAsUser: 1000,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [
          {
            name: 'c',
            image: 'busybox:1.37.0',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    });
    const at = await createAt('squatted', { schedule: '2019-04-12T10:12:00Z', command: 'true' });
    await eventually(async () => {
      assert.equal(condition(await getAt('squatted'), 'PodNotOwned'), 'True');
    });
    const waiting = await getAt('squatted');
    assert.equal(waiting.status?.phase, 'PENDING');
    assert.equal(waiting.status.podName, undefined);
    await eventually(async () => {
      assert.ok(
        (await eventsFor('squatted')).some((e) => e.reason === 'PodNotOwned' && e.type === 'Warning'),
      );
    });
    const foreign = await getPod('squatted-pod');
    assert.equal(foreign.metadata?.ownerReferences, undefined);
    assert.equal(foreign.metadata?.labels?.app, 'someone-else');
    // The controller caches only the pods it created (label selector), not the namespace's other pods.
    assert.equal(bed.controller.podCache.get(bed.ns.name, 'squatted-pod'), undefined);
    for (const cached of bed.controller.podCache.list(bed.ns.name))
      assert.equal(cached.metadata?.labels?.['app.kubernetes.io/managed-by'], 'at-scheduler');

    await bed.pods.delete({ namespace: bed.ns.name, name: 'squatted-pod' });
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
      },
      { timeoutMs: 15_000 },
    );
    assert.equal(condition(await getAt('squatted'), 'PodNotOwned'), 'False');
    await eventually(() => {
      assert.equal(
        bed.controller.podCache.get(bed.ns.name, 'squatted-pod')?.metadata?.labels?.[AT_UID_LABEL],
        at.metadata?.uid,
      );
    });
  });

  it('a pod the API server refuses returns the At to PENDING (condition + Event) and is retried later, not in a loop', async () => {
    // Requests above limits: pod validation refuses the create (422), and would every time.
    const at = await createAt('refused', {
      schedule: '2019-04-12T10:12:00Z',
      command: 'true',
      resources: { requests: { memory: '128Mi' }, limits: { memory: '64Mi' } },
    });
    await eventually(async () => {
      assert.ok(
        (await eventsFor('refused')).some((e) => e.reason === 'PodCreateFailed' && e.type === 'Warning'),
      );
    });
    // Each attempt writes RUNNING then PENDING, and each write is a watch event: without a retry delay
    // the At's own status writes would re-enqueue it at once, as fast as the API server answers.
    await sleep(2000);
    assert.equal(bed.controller.statusWrites.get('refused'), 2, 'one attempt, then a wait before the next');
    const scheduledOf = async (): Promise<{ reason: string; lastTransitionTime: string }> => {
      const scheduled = (await getAt('refused')).status?.conditions?.find((c) => c.type === 'Scheduled');
      assert.ok(scheduled);
      return scheduled;
    };
    const refused = await getAt('refused');
    assert.equal(refused.status?.phase, 'PENDING');
    assert.equal(refused.status.podName, undefined);
    const first = await scheduledOf();
    assert.equal(first.reason, 'PodCreateFailed');
    assert.equal((await podsOf(at)).length, 0);
    // The next attempt comes POD_CREATE_RETRY_MS (10 s) after the first failure, and paces the one after it.
    await eventually(
      () => {
        assert.equal(bed.controller.statusWrites.get('refused'), 4);
      },
      { timeoutMs: 15_000 },
    );
    const second = await scheduledOf();
    assert.equal(second.reason, 'PodCreateFailed');
    assert.ok(Date.parse(second.lastTransitionTime) > Date.parse(first.lastTransitionTime));
    await sleep(1000);
    assert.equal(bed.controller.statusWrites.get('refused'), 4, 'the second failure waits as well');
  });
});
