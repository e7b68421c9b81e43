/**
 * at-scheduler's own metric families (metrics.ts), wired as main.ts wires them, read off the Manager's
 * registry after real reconciles on a real control plane (the testbed's `kubelet()` ends the pods).
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { atTestbed, condition } from './at-controller.test-support.ts';
import { valueOf } from './metrics.test-support.ts';

describe('at-scheduler on a real control plane: its metrics', () => {
  const bed = atTestbed('at-metrics');
  const { createAt, getAt, podsOf, kubelet } = bed;
  const exported = (name: string, labels?: Record<string, string>) =>
    valueOf(bed.controller.registry, name, labels);

  /** Runs an At due now to DONE, its command exiting `exitCode`. */
  async function runToCompletion(name: string, exitCode: number): Promise<void> {
    const at = await createAt(name, { schedule: new Date().toISOString(), command: `exit ${exitCode}` });
    await eventually(async () => {
      assert.equal((await podsOf(at)).length, 1);
    });
    await kubelet(`${name}-pod`, exitCode === 0 ? 'Succeeded' : 'Failed', {
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
    });
    await eventually(async () => {
      assert.equal((await getAt(name)).status?.phase, 'DONE');
    });
  }

  it('an At run to completion: one start delay observed, one finish counted by result', async () => {
    assert.deepEqual(
      [
        await exported('loopwright_ats_finished_total', { result: 'succeeded' }),
        await exported('loopwright_ats_finished_total', { result: 'failed' }),
        await exported('loopwright_at_start_delay_seconds_count'),
      ],
      [0, 0, 0],
    );
    await runToCompletion('succeeds', 0);
    await runToCompletion('fails', 3);
    assert.equal(await exported('loopwright_ats_finished_total', { result: 'succeeded' }), 1);
    assert.equal(await exported('loopwright_ats_finished_total', { result: 'failed' }), 1);
    assert.equal(await exported('loopwright_at_start_delay_seconds_count'), 2);
    // Due when created: started within seconds, however slow the machine.
    assert.equal(await exported('loopwright_at_start_delay_seconds_bucket', { le: '10' }), 2);
  });

  it('an At past its schedule whose pod cannot be created is overdue until it runs', async () => {
    // A foreign pod holds the At's pod name: the At stays PENDING without a pod (never adopted).
    await bed.pods.create({
      metadata: { name: 'late-pod', namespace: bed.ns.name },
      spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'c',
            image: 'busybox:1.37.0',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    });
    assert.equal(await exported('loopwright_ats_overdue'), 0);
    const at = await createAt('late', {
      schedule: new Date(Date.now() - 2 * 60_000).toISOString(),
      command: 'true',
    });
    // Reported by the controller, and still overdue: the count is of what the cache holds, not of a step.
    await eventually(async () => {
      assert.equal(condition(await getAt('late'), 'PodNotOwned'), 'True');
    });
    assert.equal(await exported('loopwright_ats_overdue'), 1);
    await bed.pods.delete({ namespace: bed.ns.name, name: 'late-pod' });
    // The name is checked again every 10 s; then the At runs and is no longer overdue.
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
        assert.equal(await exported('loopwright_ats_overdue'), 0);
      },
      { timeoutMs: 20_000 },
    );
  });
});
