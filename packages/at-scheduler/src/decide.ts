/**
 * The At controller's business logic as one pure function: given the At, what the controller knows
 * about its pod, and the time, what is the next step? No I/O, no clock: reconcile.ts performs the
 * step, decide.test.ts covers every phase x pod state.
 *
 * The invariant everything here protects: every due At runs exactly once, never twice, never zero
 * times. The status says RUNNING (the claim) before the pod is created; the pod carries the outcome
 * finalizer, which holds it until the At has recorded how it ended. So for a claim that says so
 * (`status.podFinalizer`), a recorded pod that does not exist was never created, and is created (once
 * more claimed, conditional on the version decided from). A claim of an earlier version (its pod
 * without the finalizer) cannot tell "never created" from "deleted": its missing pod ends the At
 * Failed/PodDisappeared, never re-created.
 */
import { findCondition, isConditionReason, isConditionTrue } from '@loopwright/runtime';
import type { AtSpec, AtStatus } from './generated/types.ts';
import { ConditionReason, ConditionType } from './reasons.ts';
import { AT_OUTCOME_FINALIZER, type Pod } from './resource.ts';
import { parseSchedule } from './schedule.ts';

/** The name of the container that runs the command. */
export const COMMAND_CONTAINER = 'command';

/**
 * How long after `startTime` a missing pod is not yet concluded to be gone, nor even looked up: the
 * pod cache may lag behind the create, and the writer of RUNNING may still be creating it (another
 * replica finishing its last reconcile during a leadership hand-over).
 */
export const START_GRACE_MS = 5_000;

/** How often a due At whose pod name is taken by a foreign pod checks whether the name is free again. */
export const POD_NOT_OWNED_RECHECK_MS = 10_000;

/**
 * How long after a refused pod create (quota, admission, invalid spec) the create is tried again, for the
 * same generation; a spec change retries at once. Timed from the `Scheduled=False`/`PodCreateFailed`
 * condition's `lastTransitionTime` (whole seconds, as `metav1.Time`), not from the queue's backoff: the
 * failed attempt's own status writes are watch events that re-enqueue the At at once, and a restart
 * forgets the queue but not the status.
 */
export const POD_CREATE_RETRY_MS = 10_000;

/**
 * How often a RUNNING At whose pod is outside the label-selected cache (its managed-by label was removed
 * or changed) reads the pod again: no watch event will announce that it finished.
 */
export const UNCACHED_POD_RECHECK_MS = 10_000;

export interface AtView {
  generation: number;
  /** metadata.deletionTimestamp is set: garbage collection removes the pod; nothing to do. */
  deleting: boolean;
  spec: Pick<AtSpec, 'schedule' | 'ttlSecondsAfterFinished'>;
  status: AtStatus | undefined;
}

/** What the controller knows about the pod named for the At. */
export type ObservedPod =
  /** Not in the cache (`confirmed: false`), or not found by a live GET (`confirmed: true`). */
  | { kind: 'absent'; confirmed: boolean }
  /**
   * A pod with that name whose controller owner is not this At (by uid). Never adopted. `leftover`: it
   * is a pod of ours that outlived its At (an earlier At of the same name), still holding the outcome
   * finalizer while the garbage collector deletes it; released, it goes and frees the name.
   */
  | { kind: 'foreign'; leftover?: PodToRelease }
  | {
      kind: 'owned';
      /** The pod's own uid: a delete is conditional on it (the name may be re-used by then). */
      uid: string;
      /** Found by a live GET, not in the label-selected cache: its changes raise no events for the At. */
      outsideCache: boolean;
      phase: string | undefined;
      deleting: boolean;
      /** `metadata.finalizers`; holding {@link AT_OUTCOME_FINALIZER} until the outcome is recorded. */
      finalizers: readonly string[];
      terminated: { exitCode: number; reason?: string; message?: string } | undefined;
      /** Pod-level reason/message (e.g. Evicted), used when the container never terminated. */
      reason: string | undefined;
      message: string | undefined;
    };

/** A pod whose outcome finalizer is to be removed: its uid, and its finalizers as seen. */
export interface PodToRelease {
  uid: string;
  finalizers: readonly string[];
}

export type Action =
  | { type: 'nothing'; why: string }
  /** Wake up again after `retryAfterMs` (requeue-after, no polling); nothing to write. */
  | { type: 'wait'; retryAfterMs: number }
  /**
   * Record phase PENDING / Scheduled=False for this generation (a changed schedule after a status was
   * written: it clears a reported error or an older generation's conditions), then wake up at the
   * schedule, `retryAfterMs` from now. A new At needs no such write: the CRD defaults `status.phase` to
   * PENDING, so it waits without costing the API server anything before its start.
   */
  | { type: 'recordPending'; scheduleMs: number; retryAfterMs: number }
  /**
   * Record RUNNING + podName in status (conditional on resourceVersion), then create the pod if
   * `createPod`. `guarded`: the pod carries the outcome finalizer (one created now always does), which
   * the claim records in `status.podFinalizer`.
   */
  | { type: 'start'; createPod: boolean; guarded: boolean; scheduleMs: number }
  /** The cache does not show the pod: GET it from the API server and decide again with the answer. */
  | { type: 'lookupPod' }
  | {
      type: 'finish';
      outcome: 'Succeeded' | 'Failed';
      exitCode?: number;
      /** `status.reason`: the container's or the pod's own word, as reported. */
      reason: string;
      /**
       * The reason of the outcome's condition: `reason` when a condition may carry it, otherwise the
       * outcome's own (a runtime may report any text, and a condition the API server rejects would
       * leave the At RUNNING).
       */
      conditionReason: string;
      message: string;
    }
  /** The pod name is taken by a pod this At does not control: report it (once per generation), check again later. */
  | { type: 'podNotOwned'; report: boolean; retryAfterMs: number }
  /** spec.schedule does not parse: report it once per generation; wait for a spec change. */
  | { type: 'invalidSchedule'; message: string }
  /** ttlSecondsAfterFinished has passed: delete the finished pod `uid` (the At stays). */
  | { type: 'deletePod'; uid: string }
  /**
   * Remove the outcome finalizer from pod `uid` (whose finalizers are `finalizers`): the At's outcome is
   * recorded, or the At is being deleted.
   */
  | ({ type: 'releasePod' } & PodToRelease)
  /**
   * The spec changed (a new generation) and the step decided writes no status (a RUNNING or DONE At
   * acts on no spec change): record the generation as observed, in status and in every condition (each
   * still holds for it), in one write; then wake after `retryAfterMs` if the step was a wait.
   */
  | { type: 'observeGeneration'; retryAfterMs?: number };

/** `confirmed`: `pod` is the answer of a live GET rather than the cache's. */
export function observePod(pod: Pod | undefined, atUid: string | undefined, confirmed: boolean): ObservedPod {
  if (!pod) return { kind: 'absent', confirmed };
  const controller = pod.metadata?.ownerReferences?.find((ref) => ref.controller === true);
  if (!controller || controller.uid !== atUid) {
    const leftover = podOfAtGone(pod);
    return leftover ? { kind: 'foreign', leftover } : { kind: 'foreign' };
  }
  const container =
    pod.status?.containerStatuses?.find((c) => c.name === COMMAND_CONTAINER) ??
    pod.status?.containerStatuses?.[0];
  return {
    kind: 'owned',
    // Every pod the API server returns has one.
    uid: pod.metadata?.uid ?? '',
    outsideCache: confirmed,
    phase: pod.status?.phase,
    deleting: pod.metadata?.deletionTimestamp !== undefined,
    finalizers: pod.metadata?.finalizers ?? [],
    terminated: container?.state?.terminated,
    reason: pod.status?.reason,
    message: pod.status?.message,
  };
}

export function decide(at: AtView, pod: ObservedPod, nowMs: number): Action {
  if (pod.kind === 'foreign' && pod.leftover) return { type: 'releasePod', ...pod.leftover };
  if (at.deleting) {
    // Nothing is recorded for an At that goes; its pod must not outlive it.
    if (pod.kind === 'owned' && guarded(pod)) return releasePod(pod);
    return { type: 'nothing', why: 'the At is being deleted; garbage collection removes its pod' };
  }
  return observingGeneration(at, decideStep(at, pod, nowMs));
}

/**
 * The pod named for an At that is no longer in the cache (deleted): released when it still holds the
 * outcome finalizer and is being deleted (the garbage collector's work, its owner gone) or has no
 * controller owner left (orphaned by the At's deletion); undefined otherwise. Nothing is recorded for
 * an At that is gone, so nothing waits for the pod's outcome.
 */
export function releaseWithoutAt(pod: Pod | undefined): PodToRelease | undefined {
  return pod && podOfAtGone(pod);
}

/**
 * `pod`, known not to belong to a live At (none by its name, or one with another uid), when it holds the
 * outcome finalizer and is being deleted or has no controller owner left.
 */
function podOfAtGone(pod: Pod): PodToRelease | undefined {
  const finalizers = pod.metadata?.finalizers ?? [];
  if (!finalizers.includes(AT_OUTCOME_FINALIZER)) return undefined;
  const owned = pod.metadata?.ownerReferences?.some((ref) => ref.controller === true) ?? false;
  if (owned && pod.metadata?.deletionTimestamp === undefined) return undefined;
  return { uid: pod.metadata?.uid ?? '', finalizers };
}

function guarded(pod: Extract<ObservedPod, { kind: 'owned' }>): boolean {
  return pod.finalizers.includes(AT_OUTCOME_FINALIZER);
}

function releasePod(pod: Extract<ObservedPod, { kind: 'owned' }>): Action {
  return { type: 'releasePod', uid: pod.uid, finalizers: pod.finalizers };
}

/**
 * Health checks (kstatus, Argo CD, Flux) count an object as reconciled once `status.observedGeneration`
 * reaches `metadata.generation`, and compare nothing while it is absent. Every status write records it;
 * once one has, a step that writes nothing for a newer generation gets a write of its own, so the
 * recorded generation never stays behind. That write leaves the generation as it is, so the reconcile
 * its watch event triggers writes nothing. A new At that merely waits for its schedule has no
 * `observedGeneration` yet and gets no write: its first is the claim.
 */
function observingGeneration(at: AtView, action: Action): Action {
  if (!statusWritten(at.status) || at.status?.observedGeneration === at.generation) return action;
  if (action.type === 'nothing') return { type: 'observeGeneration' };
  if (action.type === 'wait') return { type: 'observeGeneration', retryAfterMs: action.retryAfterMs };
  return action;
}

/**
 * Has this controller written the status? A new At's status is absent, or only the phase the CRD
 * defaults; every write of ours records `observedGeneration`, and versions that predate it left a
 * phase past PENDING or conditions.
 */
function statusWritten(status: AtStatus | undefined): boolean {
  if (status === undefined) return false;
  return (
    status.observedGeneration !== undefined ||
    (status.conditions?.length ?? 0) > 0 ||
    status.phase === 'RUNNING' ||
    status.phase === 'DONE'
  );
}

function decideStep(at: AtView, pod: ObservedPod, nowMs: number): Action {
  switch (at.status?.phase) {
    case 'DONE':
      return decideDone(at, pod, nowMs);
    case 'RUNNING':
      return decideRunning(at, pod, nowMs);
    default:
      return decidePending(at, pod, nowMs);
  }
}

function decidePending(at: AtView, pod: ObservedPod, nowMs: number): Action {
  const conditions = at.status?.conditions;
  const schedule = parseSchedule(at.spec.schedule);
  if (!schedule.ok) {
    const reported = findCondition(conditions, ConditionType.InvalidSchedule);
    if (reported?.status === 'True' && reported.observedGeneration === at.generation) {
      return {
        type: 'nothing',
        why: 'invalid schedule already reported for this generation; waiting for a spec change',
      };
    }
    return { type: 'invalidSchedule', message: schedule.error };
  }
  // Our own pod already exists although the status does not say RUNNING (the status was reset or lost):
  // record it, never create another one.
  if (pod.kind === 'owned')
    return { type: 'start', createPod: false, guarded: guarded(pod), scheduleMs: schedule.epochMs };

  // Written state that no longer holds for this generation: an error to clear, or conditions of an older
  // one. A new At has none (its phase is the CRD's default), and waits without a write.
  const needsRecord =
    (statusWritten(at.status) && at.status?.observedGeneration !== at.generation) ||
    isConditionTrue(conditions, ConditionType.InvalidSchedule) ||
    isConditionTrue(conditions, ConditionType.PodNotOwned);
  if (schedule.epochMs > nowMs) {
    const retryAfterMs = schedule.epochMs - nowMs;
    return needsRecord
      ? { type: 'recordPending', scheduleMs: schedule.epochMs, retryAfterMs }
      : { type: 'wait', retryAfterMs };
  }

  const scheduled = findCondition(conditions, ConditionType.Scheduled);
  if (
    scheduled?.status === 'False' &&
    scheduled.reason === ConditionReason.PodCreateFailed &&
    scheduled.observedGeneration === at.generation
  ) {
    const retryMs = Date.parse(scheduled.lastTransitionTime) + POD_CREATE_RETRY_MS;
    if (retryMs > nowMs) return { type: 'wait', retryAfterMs: retryMs - nowMs };
  }

  const notOwned = findCondition(conditions, ConditionType.PodNotOwned);
  const notOwnedReported = notOwned?.status === 'True' && notOwned.observedGeneration === at.generation;
  if (pod.kind === 'foreign')
    return { type: 'podNotOwned', report: !notOwnedReported, retryAfterMs: POD_NOT_OWNED_RECHECK_MS };
  // The foreign pod is invisible to the label-selected cache: while one was last seen, ask the API server
  // before writing RUNNING, so a conflict costs a GET per recheck, not a status round trip.
  if (!pod.confirmed && notOwnedReported) return { type: 'lookupPod' };
  return { type: 'start', createPod: true, guarded: true, scheduleMs: schedule.epochMs };
}

function decideRunning(at: AtView, pod: ObservedPod, nowMs: number): Action {
  switch (pod.kind) {
    case 'absent': {
      const startMs = at.status?.startTime ? Date.parse(at.status.startTime) : Number.NaN;
      // Within the grace the pod is expected rather than missing: the cache may simply not have caught up
      // with a create a moment ago (its watch event will wake the At), or the writer of RUNNING is still
      // creating it. Nothing is concluded, and nothing is read, before the grace ends.
      if (startMs + START_GRACE_MS > nowMs)
        return { type: 'wait', retryAfterMs: startMs + START_GRACE_MS - nowMs };
      // Past it, the cache's word is not enough to end the At: only a live GET can tell.
      if (!pod.confirmed) return { type: 'lookupPod' };
      // The claimed pod would carry the outcome finalizer, which only an outcome recorded (DONE, so not
      // this RUNNING) removes: it was never created (the claimer stopped, or its create failed without
      // an answer). Claimed again, conditional on this version (a reader of a stale RUNNING gets 409),
      // and created under the same name.
      if (at.status?.podFinalizer === AT_OUTCOME_FINALIZER) {
        const schedule = parseSchedule(at.spec.schedule);
        return {
          type: 'start',
          createPod: true,
          guarded: true,
          scheduleMs: schedule.ok ? schedule.epochMs : startMs,
        };
      }
      return {
        type: 'finish',
        outcome: 'Failed',
        reason: ConditionReason.PodDisappeared,
        conditionReason: ConditionReason.PodDisappeared,
        message:
          'the recorded pod (claimed by an at-scheduler before 0.1.5, without the outcome finalizer) no longer exists and did not report completion (deleted, evicted, or never created because the controller stopped between recording and creating it); it is not re-created',
      };
    }
    case 'foreign':
      return {
        type: 'finish',
        outcome: 'Failed',
        reason: ConditionReason.PodDisappeared,
        conditionReason: ConditionReason.PodDisappeared,
        message: 'the recorded pod was replaced by a pod this At does not control; it is not re-created',
      };
    case 'owned':
      return finishedPod(pod) ?? deletedBeforeCompletion(pod) ?? waitForPod(pod);
  }
}

/**
 * A pod being deleted (by a user, an API-initiated eviction, the node's loss) before it reported
 * completion: the outcome finalizer keeps it readable, and the At ends Failed with the pod's own reason,
 * or `PodDeleted`; the release follows.
 */
function deletedBeforeCompletion(pod: Extract<ObservedPod, { kind: 'owned' }>): Action | undefined {
  if (!pod.deleting) return undefined;
  const reason = reported(pod.terminated?.reason) ?? reported(pod.reason) ?? ConditionReason.PodDeleted;
  const action: Action = {
    type: 'finish',
    outcome: 'Failed',
    reason,
    conditionReason: isConditionReason(reason) ? reason : ConditionReason.PodDeleted,
    message: pod.terminated?.message ?? pod.message ?? 'the pod was deleted before it reported completion',
  };
  if (pod.terminated) action.exitCode = pod.terminated.exitCode;
  return action;
}

function finishedPod(pod: Extract<ObservedPod, { kind: 'owned' }>): Action | undefined {
  const terminated = pod.terminated;
  if (pod.phase === 'Succeeded') {
    const reason = reported(terminated?.reason) ?? ConditionReason.Completed;
    return {
      type: 'finish',
      outcome: 'Succeeded',
      exitCode: terminated?.exitCode ?? 0,
      reason,
      conditionReason: isConditionReason(reason) ? reason : ConditionReason.Completed,
      message: terminated?.message ?? '',
    };
  }
  if (pod.phase === 'Failed') {
    const reason = reported(terminated?.reason) ?? reported(pod.reason) ?? ConditionReason.Failed;
    const action: Action = {
      type: 'finish',
      outcome: 'Failed',
      reason,
      conditionReason: isConditionReason(reason) ? reason : ConditionReason.Failed,
      message: terminated?.message ?? pod.message ?? '',
    };
    if (terminated) action.exitCode = terminated.exitCode;
    return action;
  }
  return undefined;
}

/** A reason as reported, or undefined when there is none to report (absent or empty). */
function reported(reason: string | undefined): string | undefined {
  return reason === '' ? undefined : reason;
}

/**
 * A pod that still exists is still the At's pod (owner uid + name), even without the label the cache selects
 * on. Outside the cache nothing announces its completion, so it is read again on a timer.
 */
function waitForPod(pod: Extract<ObservedPod, { kind: 'owned' }>): Action {
  if (pod.outsideCache) return { type: 'wait', retryAfterMs: UNCACHED_POD_RECHECK_MS };
  return { type: 'nothing', why: `pod is ${pod.phase ?? 'not yet reported'}; its events wake the At` };
}

function decideDone(at: AtView, pod: ObservedPod, nowMs: number): Action {
  // The outcome is recorded: the pod may go (the ttl deletes it only once released).
  if (pod.kind === 'owned' && guarded(pod)) return releasePod(pod);
  const ttl = at.spec.ttlSecondsAfterFinished;
  if (ttl === undefined || pod.kind !== 'owned') return { type: 'nothing', why: 'DONE' };
  if (pod.deleting) return { type: 'nothing', why: 'DONE; the finished pod is being deleted' };
  const completed = at.status?.completionTime ? Date.parse(at.status.completionTime) : Number.NaN;
  const dueMs = (Number.isNaN(completed) ? nowMs : completed) + ttl * 1000;
  if (dueMs > nowMs) return { type: 'wait', retryAfterMs: dueMs - nowMs };
  return { type: 'deletePod', uid: pod.uid };
}
