import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AtStatusCondition } from './generated/types.ts';
import {
  POD_CREATE_RETRY_MS,
  POD_NOT_OWNED_RECHECK_MS,
  START_GRACE_MS,
  UNCACHED_POD_RECHECK_MS,
  decide,
  observePod,
  releaseWithoutAt,
  type AtView,
  type ObservedPod,
} from './decide.ts';
import { ConditionReason, ConditionType } from './reasons.ts';
import { AT_OUTCOME_FINALIZER, type Pod } from './resource.ts';

const SCHEDULE = '2030-01-01T00:00:00Z';
const SCHEDULE_MS = Date.parse(SCHEDULE);
const BEFORE = SCHEDULE_MS - 5_000;
const AFTER = SCHEDULE_MS + 250;

function at(
  overrides: Partial<AtView> & {
    phase?: 'PENDING' | 'RUNNING' | 'DONE';
    conditions?: AtStatusCondition[];
  } = {},
): AtView {
  const { phase, conditions, ...rest } = overrides;
  return {
    generation: 1,
    deleting: false,
    spec: { schedule: SCHEDULE },
    status:
      phase === undefined && conditions === undefined
        ? undefined
        : { phase, observedGeneration: 1, conditions, podName: 'x-pod' },
    ...rest,
  };
}

const absent: ObservedPod = { kind: 'absent', confirmed: false };
const confirmedAbsent: ObservedPod = { kind: 'absent', confirmed: true };
const foreign: ObservedPod = { kind: 'foreign' };
function owned(
  phase: string | undefined,
  extra: Partial<Extract<ObservedPod, { kind: 'owned' }>> = {},
): ObservedPod {
  return {
    kind: 'owned',
    uid: 'pod-uid',
    outsideCache: false,
    phase,
    deleting: false,
    finalizers: [AT_OUTCOME_FINALIZER],
    terminated: undefined,
    reason: undefined,
    message: undefined,
    ...extra,
  };
}
/** A pod of ours without the outcome finalizer: released, or created by an earlier version. */
function released(
  phase: string | undefined,
  extra: Partial<Extract<ObservedPod, { kind: 'owned' }>> = {},
): ObservedPod {
  return owned(phase, { finalizers: [], ...extra });
}
function condition(type: string, status: 'True' | 'False', observedGeneration = 1): AtStatusCondition {
  return {
    type,
    status,
    observedGeneration,
    lastTransitionTime: '2029-01-01T00:00:00Z',
    reason: 'R',
    message: '',
  };
}

describe('decide: new or PENDING At', () => {
  it('a new At (no status, or only the phase the CRD defaults) writes nothing and sleeps exactly until the schedule', () => {
    assert.deepEqual(decide(at(), absent, BEFORE), { type: 'wait', retryAfterMs: 5_000 });
    const defaulted = at({ status: { phase: 'PENDING' }, generation: 3 });
    assert.deepEqual(decide(defaulted, absent, BEFORE), { type: 'wait', retryAfterMs: 5_000 });
  });

  it('a status written before observedGeneration existed (conditions, no generation) is recorded again', () => {
    const legacy = at({
      status: { phase: 'PENDING', conditions: [condition(ConditionType.Scheduled, 'False')] },
    });
    assert.deepEqual(decide(legacy, absent, BEFORE), {
      type: 'recordPending',
      scheduleMs: SCHEDULE_MS,
      retryAfterMs: 5_000,
    });
  });

  it('an already recorded PENDING At only sleeps (no status write)', () => {
    assert.deepEqual(decide(at({ phase: 'PENDING' }), absent, BEFORE), { type: 'wait', retryAfterMs: 5_000 });
  });

  it('a schedule changed while PENDING (new generation) records the new time and sleeps until it', () => {
    const changed = at({ phase: 'PENDING', generation: 2, spec: { schedule: '2030-01-01T00:01:00Z' } });
    assert.deepEqual(decide(changed, absent, BEFORE), {
      type: 'recordPending',
      scheduleMs: SCHEDULE_MS + 60_000,
      retryAfterMs: 65_000,
    });
  });

  it('starts at the schedule, and when it is already past', () => {
    assert.deepEqual(decide(at({ phase: 'PENDING' }), absent, SCHEDULE_MS), {
      type: 'start',
      createPod: true,
      guarded: true,
      scheduleMs: SCHEDULE_MS,
    });
    assert.deepEqual(decide(at(), absent, AFTER + 86_400_000), {
      type: 'start',
      createPod: true,
      guarded: true,
      scheduleMs: SCHEDULE_MS,
    });
  });

  it('never starts a millisecond early', () => {
    assert.equal(decide(at({ phase: 'PENDING' }), absent, SCHEDULE_MS - 1).type, 'wait');
  });

  it('honours offsets and fractions', () => {
    const offset = at({ spec: { schedule: '2030-01-01T02:00:00.5+02:00' } });
    assert.deepEqual(decide(offset, absent, SCHEDULE_MS), { type: 'wait', retryAfterMs: 500 });
    assert.deepEqual(decide(offset, absent, SCHEDULE_MS + 500), {
      type: 'start',
      createPod: true,
      guarded: true,
      scheduleMs: SCHEDULE_MS + 500,
    });
  });

  it('a pod this At already controls is recorded, never created again', () => {
    for (const phase of ['Pending', 'Running', 'Succeeded', 'Failed']) {
      assert.deepEqual(decide(at({ phase: 'PENDING' }), owned(phase), AFTER), {
        type: 'start',
        createPod: false,
        guarded: true,
        scheduleMs: SCHEDULE_MS,
      });
      assert.deepEqual(decide(at({ phase: 'PENDING' }), owned(phase), BEFORE), {
        type: 'start',
        createPod: false,
        guarded: true,
        scheduleMs: SCHEDULE_MS,
      });
      // An earlier version's pod, without the outcome finalizer: the claim must not say it has one.
      assert.deepEqual(decide(at({ phase: 'PENDING' }), released(phase), AFTER), {
        type: 'start',
        createPod: false,
        guarded: false,
        scheduleMs: SCHEDULE_MS,
      });
    }
  });

  it('a foreign pod with the pod name is reported once per generation and rechecked slowly, never adopted', () => {
    assert.deepEqual(decide(at({ phase: 'PENDING' }), foreign, AFTER), {
      type: 'podNotOwned',
      report: true,
      retryAfterMs: POD_NOT_OWNED_RECHECK_MS,
    });
    const reported = at({ phase: 'PENDING', conditions: [condition(ConditionType.PodNotOwned, 'True')] });
    assert.deepEqual(decide(reported, foreign, AFTER), {
      type: 'podNotOwned',
      report: false,
      retryAfterMs: POD_NOT_OWNED_RECHECK_MS,
    });
    const staleReport = at({
      phase: 'PENDING',
      generation: 2,
      conditions: [condition(ConditionType.PodNotOwned, 'True', 1)],
    });
    assert.equal(decide(staleReport, foreign, AFTER).type, 'podNotOwned');
    assert.deepEqual(decide(staleReport, foreign, AFTER), {
      type: 'podNotOwned',
      report: true,
      retryAfterMs: POD_NOT_OWNED_RECHECK_MS,
    });
  });

  it('after a reported conflict, looks the name up live before writing RUNNING again; starts once it is free', () => {
    const reported = at({ phase: 'PENDING', conditions: [condition(ConditionType.PodNotOwned, 'True')] });
    assert.deepEqual(decide(reported, absent, AFTER), { type: 'lookupPod' });
    assert.deepEqual(decide(reported, confirmedAbsent, AFTER), {
      type: 'start',
      createPod: true,
      guarded: true,
      scheduleMs: SCHEDULE_MS,
    });
  });

  it('a cleared conflict or invalid schedule condition is rewritten when waiting', () => {
    for (const type of [ConditionType.PodNotOwned, ConditionType.InvalidSchedule]) {
      const action = decide(at({ phase: 'PENDING', conditions: [condition(type, 'True')] }), absent, BEFORE);
      assert.deepEqual(action, {
        type: 'recordPending',
        scheduleMs: SCHEDULE_MS,
        retryAfterMs: 5_000,
      });
      const cleared = decide(
        at({ phase: 'PENDING', conditions: [condition(type, 'False')] }),
        absent,
        BEFORE,
      );
      assert.deepEqual(cleared, { type: 'wait', retryAfterMs: 5_000 });
    }
  });

  it('a pod create the API server refused is retried POD_CREATE_RETRY_MS after that failure, at once after a spec change', () => {
    const failedAt = '2030-01-01T00:00:01Z';
    const refused = at({
      phase: 'PENDING',
      conditions: [
        {
          ...condition(ConditionType.Scheduled, 'False'),
          reason: ConditionReason.PodCreateFailed,
          lastTransitionTime: failedAt,
        },
      ],
    });
    // Its own status writes wake the At right after the failure: it must not try again then.
    const soon = Date.parse(failedAt) + 100;
    assert.deepEqual(decide(refused, absent, soon), {
      type: 'wait',
      retryAfterMs: POD_CREATE_RETRY_MS - 100,
    });
    assert.deepEqual(decide(refused, absent, Date.parse(failedAt) + POD_CREATE_RETRY_MS), {
      type: 'start',
      createPod: true,
      guarded: true,
      scheduleMs: SCHEDULE_MS,
    });
    // A spec change (e.g. fixed resources) is a new generation: retried at once.
    assert.equal(decide({ ...refused, generation: 2 }, absent, soon).type, 'start');
    // Other reasons for Scheduled=False (recorded just as recently) do not delay the start.
    const waited = at({
      phase: 'PENDING',
      conditions: [
        {
          ...condition(ConditionType.Scheduled, 'False'),
          reason: ConditionReason.Waiting,
          lastTransitionTime: failedAt,
        },
      ],
    });
    assert.equal(decide(waited, absent, soon).type, 'start');
  });

  it('an unparseable stored schedule is reported once per generation, then nothing until the spec changes', () => {
    const bad = at({ spec: { schedule: 'tomorrow at noon' } });
    const first = decide(bad, absent, AFTER);
    assert.equal(first.type, 'invalidSchedule');
    assert.match((first as { message: string }).message, /tomorrow at noon/);
    const reported = at({
      spec: { schedule: 'tomorrow at noon' },
      phase: 'PENDING',
      conditions: [condition(ConditionType.InvalidSchedule, 'True')],
    });
    assert.equal(decide(reported, absent, AFTER).type, 'nothing');
    assert.equal(decide({ ...reported, generation: 2 }, absent, AFTER).type, 'invalidSchedule');
  });

  it('an At being deleted records nothing: it releases its pod (still holding the finalizer), nothing else', () => {
    for (const phase of [undefined, 'PENDING', 'RUNNING', 'DONE'] as const) {
      const unguarded: ObservedPod[] = [
        absent,
        foreign,
        released('Running'),
        released('Succeeded', { deleting: true }),
      ];
      for (const pod of unguarded)
        assert.equal(decide(at({ phase, deleting: true }), pod, AFTER).type, 'nothing');
      for (const pod of [owned('Running'), owned('Running', { deleting: true }), owned('Succeeded')]) {
        assert.deepEqual(decide(at({ phase, deleting: true }), pod, AFTER), {
          type: 'releasePod',
          uid: 'pod-uid',
          finalizers: [AT_OUTCOME_FINALIZER],
        });
      }
    }
  });
});

describe('decide: RUNNING At', () => {
  /** Claimed by a version before the outcome finalizer. */
  const running = at({ phase: 'RUNNING' });
  const guardedClaim: AtView = {
    ...running,
    status: { ...running.status, podFinalizer: AT_OUTCOME_FINALIZER },
  };

  it('waits for the pod while it is pending or running (its events wake the At)', () => {
    for (const phase of [undefined, 'Pending', 'Running', 'Unknown'])
      assert.equal(decide(running, owned(phase), AFTER).type, 'nothing');
  });

  it('a pod being deleted before it reported completion ends the At Failed, with the pod reason or PodDeleted', () => {
    for (const pod of [owned('Running', { deleting: true }), released('Pending', { deleting: true })]) {
      assert.deepEqual(decide(running, pod, AFTER), {
        type: 'finish',
        outcome: 'Failed',
        reason: ConditionReason.PodDeleted,
        conditionReason: ConditionReason.PodDeleted,
        message: 'the pod was deleted before it reported completion',
      });
    }
    // An API-initiated eviction may say why; a container already terminated gives its exit code.
    assert.deepEqual(
      decide(
        running,
        owned('Running', {
          deleting: true,
          reason: 'Evicted',
          message: 'node pressure',
          terminated: { exitCode: 137, reason: 'Error' },
        }),
        AFTER,
      ),
      {
        type: 'finish',
        outcome: 'Failed',
        exitCode: 137,
        reason: 'Error',
        conditionReason: 'Error',
        message: 'node pressure',
      },
    );
    assert.deepEqual(decide(running, owned('Running', { deleting: true, reason: 'Evicted' }), AFTER), {
      type: 'finish',
      outcome: 'Failed',
      reason: 'Evicted',
      conditionReason: 'Evicted',
      message: 'the pod was deleted before it reported completion',
    });
    // A reason no condition may carry stays in status.reason only.
    const odd = decide(running, owned('Running', { deleting: true, reason: 'kill -9' }), AFTER);
    assert.equal((odd as { conditionReason: string }).conditionReason, ConditionReason.PodDeleted);
    // One that completed before its deletion keeps its own outcome.
    const completed = owned('Succeeded', { deleting: true, terminated: { exitCode: 0 } });
    assert.equal((decide(running, completed, AFTER) as { outcome: string }).outcome, 'Succeeded');
  });

  it('acts on no spec change: it only records the new generation as observed, keeping any wait', () => {
    const edited = { ...running, generation: 2 };
    assert.deepEqual(decide(edited, owned('Running'), AFTER), { type: 'observeGeneration' });
    assert.deepEqual(decide(edited, owned('Running', { outsideCache: true }), AFTER), {
      type: 'observeGeneration',
      retryAfterMs: UNCACHED_POD_RECHECK_MS,
    });
    assert.equal(decide(edited, owned('Succeeded'), AFTER).type, 'finish', 'a finish records it anyway');
    assert.equal(decide({ ...edited, deleting: true }, released('Running'), AFTER).type, 'nothing');
  });

  it('never starts again while its pod may exist, whatever the time or spec', () => {
    for (const claim of [running, guardedClaim]) {
      for (const pod of [absent, foreign, owned('Running'), released('Running')]) {
        for (const now of [BEFORE, AFTER])
          assert.notEqual(decide({ ...claim, generation: 7 }, pod, now).type, 'start');
      }
    }
    // An earlier version's claim cannot tell a pod never created from one deleted.
    assert.notEqual(decide(running, confirmedAbsent, AFTER).type, 'start');
  });

  it('a claim whose pod carries the outcome finalizer, with no pod past the grace: it was never created, so it is', () => {
    assert.deepEqual(decide(guardedClaim, absent, AFTER), { type: 'lookupPod' });
    assert.deepEqual(decide(guardedClaim, confirmedAbsent, AFTER), {
      type: 'start',
      createPod: true,
      guarded: true,
      scheduleMs: SCHEDULE_MS,
    });
    assert.deepEqual(decide({ ...guardedClaim, generation: 2 }, confirmedAbsent, AFTER), {
      type: 'start',
      createPod: true,
      guarded: true,
      scheduleMs: SCHEDULE_MS,
    });
    const justStarted = {
      ...guardedClaim,
      status: { ...guardedClaim.status, startTime: new Date(AFTER).toISOString() },
    };
    assert.deepEqual(decide(justStarted, confirmedAbsent, AFTER + 1_000), {
      type: 'wait',
      retryAfterMs: START_GRACE_MS - 1_000,
    });
    // Replaced by a foreign pod: ours was deleted (its finalizer removed by force), not re-created.
    assert.equal(
      (decide(guardedClaim, foreign, AFTER) as { reason: string }).reason,
      ConditionReason.PodDisappeared,
    );
  });

  it('records success with the exit code, reason and message of the container', () => {
    const pod = owned('Succeeded', { terminated: { exitCode: 0, reason: 'Completed', message: 'done' } });
    assert.deepEqual(decide(running, pod, AFTER), {
      type: 'finish',
      outcome: 'Succeeded',
      exitCode: 0,
      reason: 'Completed',
      conditionReason: 'Completed',
      message: 'done',
    });
    assert.deepEqual(decide(running, owned('Succeeded'), AFTER), {
      type: 'finish',
      outcome: 'Succeeded',
      exitCode: 0,
      reason: ConditionReason.Completed,
      conditionReason: ConditionReason.Completed,
      message: '',
    });
  });

  it('records failure with the exit code, or the pod reason when the container never terminated', () => {
    const pod = owned('Failed', { terminated: { exitCode: 3, reason: 'Error', message: 'boom' } });
    assert.deepEqual(decide(running, pod, AFTER), {
      type: 'finish',
      outcome: 'Failed',
      exitCode: 3,
      reason: 'Error',
      conditionReason: 'Error',
      message: 'boom',
    });
    const evicted = owned('Failed', { reason: 'Evicted', message: 'node low on memory' });
    assert.deepEqual(decide(running, evicted, AFTER), {
      type: 'finish',
      outcome: 'Failed',
      reason: 'Evicted',
      conditionReason: 'Evicted',
      message: 'node low on memory',
    });
    assert.deepEqual(decide(running, owned('Failed'), AFTER), {
      type: 'finish',
      outcome: 'Failed',
      reason: ConditionReason.Failed,
      conditionReason: ConditionReason.Failed,
      message: '',
    });
  });

  it('passes on any reported reason in status, and on a condition only one the API server accepts', () => {
    // A runtime or another kubelet may report any text; the condition falls back to the outcome's own
    // reason, or the status write would be rejected and the At stay RUNNING.
    const failed = owned('Failed', { reason: 'Node-Shutdown x', message: 'node shut down' });
    assert.deepEqual(decide(running, failed, AFTER), {
      type: 'finish',
      outcome: 'Failed',
      reason: 'Node-Shutdown x',
      conditionReason: ConditionReason.Failed,
      message: 'node shut down',
    });
    const crashed = owned('Failed', { terminated: { exitCode: 137, reason: 'killed by runtime' } });
    assert.deepEqual(decide(running, crashed, AFTER), {
      type: 'finish',
      outcome: 'Failed',
      exitCode: 137,
      reason: 'killed by runtime',
      conditionReason: ConditionReason.Failed,
      message: '',
    });
    const completed = owned('Succeeded', { terminated: { exitCode: 0, reason: 'completed.ok' } });
    assert.deepEqual(decide(running, completed, AFTER), {
      type: 'finish',
      outcome: 'Succeeded',
      exitCode: 0,
      reason: 'completed.ok',
      conditionReason: ConditionReason.Completed,
      message: '',
    });
    const tooLong = 'R'.repeat(1025);
    const long = owned('Failed', { terminated: { exitCode: 1, reason: tooLong } });
    assert.equal((decide(running, long, AFTER) as { conditionReason: string }).conditionReason, 'Failed');
  });

  it('an empty reported reason counts as none', () => {
    const failed = owned('Failed', { terminated: { exitCode: 2, reason: '' }, reason: 'Evicted' });
    assert.deepEqual(decide(running, failed, AFTER), {
      type: 'finish',
      outcome: 'Failed',
      exitCode: 2,
      reason: 'Evicted',
      conditionReason: 'Evicted',
      message: '',
    });
    const succeeded = owned('Succeeded', { terminated: { exitCode: 0, reason: '' } });
    assert.equal((decide(running, succeeded, AFTER) as { reason: string }).reason, ConditionReason.Completed);
    assert.equal(
      (decide(running, owned('Failed', { reason: '' }), AFTER) as { reason: string }).reason,
      'Failed',
    );
  });

  it('a pod missing from the cache past the grace is looked up live before anything is concluded', () => {
    assert.deepEqual(decide(running, absent, AFTER), { type: 'lookupPod' });
  });

  it('a missing pod is given START_GRACE_MS after startTime (the cache may lag, another writer may still be creating it)', () => {
    const justStarted = {
      ...running,
      status: { ...running.status, startTime: new Date(AFTER).toISOString() },
    };
    for (const pod of [absent, confirmedAbsent]) {
      assert.deepEqual(decide(justStarted, pod, AFTER + 1_000), {
        type: 'wait',
        retryAfterMs: START_GRACE_MS - 1_000,
      });
      assert.deepEqual(decide(justStarted, pod, AFTER + START_GRACE_MS - 1), {
        type: 'wait',
        retryAfterMs: 1,
      });
    }
    assert.deepEqual(decide(justStarted, absent, AFTER + START_GRACE_MS), { type: 'lookupPod' });
    assert.equal(decide(justStarted, confirmedAbsent, AFTER + START_GRACE_MS).type, 'finish');
  });

  it('a pod outside the cache (managed-by label removed) is still its pod: read again until it finishes', () => {
    for (const phase of [undefined, 'Pending', 'Running']) {
      assert.deepEqual(decide(running, owned(phase, { outsideCache: true }), AFTER), {
        type: 'wait',
        retryAfterMs: UNCACHED_POD_RECHECK_MS,
      });
    }
    const finished = owned('Succeeded', {
      outsideCache: true,
      terminated: { exitCode: 0, reason: 'Completed' },
    });
    assert.deepEqual(decide(running, finished, AFTER), {
      type: 'finish',
      outcome: 'Succeeded',
      exitCode: 0,
      reason: 'Completed',
      conditionReason: 'Completed',
      message: '',
    });
  });

  it("an earlier version's recorded pod that is really gone ends the At Failed/PodDisappeared", () => {
    const action = decide(running, confirmedAbsent, AFTER);
    assert.equal(action.type, 'finish');
    assert.equal((action as { outcome: string }).outcome, 'Failed');
    assert.equal((action as { reason: string }).reason, ConditionReason.PodDisappeared);
  });

  it('a recorded pod replaced by a foreign one ends the At Failed/PodDisappeared, not adopted', () => {
    const action = decide(running, foreign, AFTER);
    assert.deepEqual(
      { ...action, message: '' },
      {
        type: 'finish',
        outcome: 'Failed',
        reason: ConditionReason.PodDisappeared,
        conditionReason: ConditionReason.PodDisappeared,
        message: '',
      },
    );
    assert.match((action as { message: string }).message, /not controlled by|does not control/);
  });
});

describe('decide: DONE At', () => {
  const done = (ttl?: number, completionTime = new Date(AFTER).toISOString()): AtView => ({
    generation: 1,
    deleting: false,
    spec: { schedule: SCHEDULE, ...(ttl === undefined ? {} : { ttlSecondsAfterFinished: ttl }) },
    status: { phase: 'DONE', observedGeneration: 1, completionTime, outcome: 'Succeeded' },
  });
  const edited = (view: AtView, generation = 5): AtView => ({
    ...view,
    generation,
    spec: { ...view.spec, schedule: '2040-01-01T00:00:00Z' },
  });

  it('releases its pod while the pod holds the outcome finalizer (before the ttl, and before a spec change is acknowledged)', () => {
    for (const view of [done(), done(0), edited(done())]) {
      for (const pod of [owned('Succeeded'), owned('Failed', { deleting: true }), owned('Running')]) {
        assert.deepEqual(decide(view, pod, AFTER), {
          type: 'releasePod',
          uid: 'pod-uid',
          finalizers: [AT_OUTCOME_FINALIZER],
        });
      }
    }
  });

  it('does nothing else, whatever the pod', () => {
    for (const pod of [absent, confirmedAbsent, foreign, released('Succeeded'), released('Running')])
      assert.deepEqual(decide(done(), pod, AFTER), { type: 'nothing', why: 'DONE' });
  });

  it('acts on no spec change, whatever the pod: it only records the new generation as observed, once', () => {
    for (const pod of [absent, confirmedAbsent, foreign, released('Succeeded'), released('Running')]) {
      assert.deepEqual(decide(edited(done()), pod, AFTER), { type: 'observeGeneration' });
      const recorded = edited(done());
      recorded.status = { ...recorded.status, observedGeneration: 5 };
      assert.equal(decide(recorded, pod, AFTER).type, 'nothing');
    }
    // A status written before observedGeneration was recorded at all.
    const unrecorded = done();
    delete unrecorded.status?.observedGeneration;
    assert.deepEqual(decide(unrecorded, released('Succeeded'), AFTER), { type: 'observeGeneration' });
  });

  it('a spec change while waiting for ttlSecondsAfterFinished is recorded, and the wait kept', () => {
    assert.deepEqual(decide(edited(done(60)), released('Succeeded'), AFTER + 1_000), {
      type: 'observeGeneration',
      retryAfterMs: 59_000,
    });
    assert.deepEqual(decide(edited(done(60)), released('Succeeded'), AFTER + 60_000), {
      type: 'deletePod',
      uid: 'pod-uid',
    });
  });

  it('deletes the finished pod once ttlSecondsAfterFinished has passed, and sleeps until then', () => {
    assert.deepEqual(decide(done(60), released('Succeeded'), AFTER + 1_000), {
      type: 'wait',
      retryAfterMs: 59_000,
    });
    assert.deepEqual(decide(done(60), released('Succeeded'), AFTER + 60_000), {
      type: 'deletePod',
      uid: 'pod-uid',
    });
    assert.deepEqual(decide(done(0), released('Failed'), AFTER), { type: 'deletePod', uid: 'pod-uid' });
  });

  it('ttl never touches a foreign pod, a pod already gone or one being deleted', () => {
    for (const pod of [absent, foreign, released('Succeeded', { deleting: true })])
      assert.equal(decide(done(0), pod, AFTER).type, 'nothing');
  });
});

describe('observePod', () => {
  const uid = 'at-uid';
  const pod = (ownerUid: string | undefined, controller = true): Pod => ({
    metadata: {
      name: 'x-pod',
      ...(ownerUid
        ? {
            ownerReferences: [
              {
                apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
                kind: 'At',
                name: 'x',
                uid: ownerUid,
                controller,
              },
            ],
          }
        : {}),
    },
    status: {
      phase: 'Failed',
      containerStatuses: [
        { name: 'sidecar', state: { terminated: { exitCode: 9 } } },
        { name: 'command', state: { terminated: { exitCode: 2, reason: 'Error' } } },
      ],
    },
  });

  it('owned only through a controller owner reference with the At uid', () => {
    assert.equal(observePod(pod(uid), uid, false).kind, 'owned');
    assert.equal(observePod(pod('other-uid'), uid, false).kind, 'foreign');
    assert.equal(observePod(pod(uid, false), uid, false).kind, 'foreign');
    assert.equal(observePod(pod(undefined), uid, false).kind, 'foreign');
    assert.deepEqual(observePod(undefined, uid, true), { kind: 'absent', confirmed: true });
  });

  it('a pod with a deletionTimestamp is being deleted', () => {
    const deleting = pod(uid);
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: '2030-01-01T00:00:00Z' };
    assert.equal((observePod(deleting, uid, false) as { deleting: boolean }).deleting, true);
    assert.equal((observePod(pod(uid), uid, false) as { deleting: boolean }).deleting, false);
  });

  it('an owned pod from a live GET is marked as outside the cache', () => {
    assert.equal((observePod(pod(uid), uid, false) as { outsideCache: boolean }).outsideCache, false);
    assert.equal((observePod(pod(uid), uid, true) as { outsideCache: boolean }).outsideCache, true);
  });

  it('reads the command container, not whichever comes first', () => {
    const observed = observePod(pod(uid), uid, false);
    assert.deepEqual((observed as { terminated: unknown }).terminated, { exitCode: 2, reason: 'Error' });
  });

  it('reads the finalizers (none when absent)', () => {
    const guarded = pod(uid);
    guarded.metadata = { ...guarded.metadata, finalizers: ['x/y', AT_OUTCOME_FINALIZER] };
    const finalizers = (observed: ObservedPod): unknown => (observed as { finalizers: unknown }).finalizers;
    assert.deepEqual(finalizers(observePod(guarded, uid, false)), ['x/y', AT_OUTCOME_FINALIZER]);
    assert.deepEqual(finalizers(observePod(pod(uid), uid, false)), []);
  });
});

describe('releaseWithoutAt (the At is gone from the cache)', () => {
  const podOf = (meta: NonNullable<Pod['metadata']>): Pod => ({
    metadata: { name: 'x-pod', uid: 'pod-uid', ...meta },
  });
  const owner = { apiVersion: 'v', kind: 'At', name: 'x', uid: 'at-uid', controller: true };
  const deletionTimestamp = '2030-01-01T00:00:00Z';

  it('releases a pod holding the outcome finalizer that the garbage collector deletes, or that was orphaned', () => {
    const finalizers = ['x/y', AT_OUTCOME_FINALIZER];
    for (const pod of [
      podOf({ finalizers, ownerReferences: [owner], deletionTimestamp }),
      podOf({ finalizers }),
      podOf({ finalizers, ownerReferences: [{ ...owner, controller: false }] }),
    ])
      assert.deepEqual(releaseWithoutAt(pod), { uid: 'pod-uid', finalizers });
  });

  it('observePod marks such a pod, owned by an earlier At of the same name, as a leftover; decide releases it first', () => {
    const finalizers = [AT_OUTCOME_FINALIZER];
    const collected = podOf({ finalizers, ownerReferences: [owner], deletionTimestamp });
    const observed = observePod(collected, 'new-at-uid', false);
    assert.deepEqual(observed, { kind: 'foreign', leftover: { uid: 'pod-uid', finalizers } });
    for (const phase of [undefined, 'PENDING', 'RUNNING', 'DONE'] as const) {
      for (const deleting of [false, true])
        assert.deepEqual(decide(at({ phase, deleting }), observed, AFTER), {
          type: 'releasePod',
          uid: 'pod-uid',
          finalizers,
        });
    }
    // Not yet deleted by the garbage collector: an ordinary foreign pod until then.
    const waiting = observePod(podOf({ finalizers, ownerReferences: [owner] }), 'new-at-uid', false);
    assert.deepEqual(waiting, { kind: 'foreign' });
  });

  it('leaves a pod still owned and not deleted (the At may be only missing from a lagging cache), one without the finalizer, and no pod', () => {
    assert.equal(
      releaseWithoutAt(podOf({ finalizers: [AT_OUTCOME_FINALIZER], ownerReferences: [owner] })),
      undefined,
    );
    assert.equal(releaseWithoutAt(podOf({ ownerReferences: [owner], deletionTimestamp })), undefined);
    assert.equal(releaseWithoutAt(podOf({ finalizers: ['x/y'], deletionTimestamp })), undefined);
    assert.equal(releaseWithoutAt(undefined), undefined);
  });
});
