/**
 * Performs what `decide` chose, against the API. The order of writes is the at-most-once design:
 *
 *   1. status -> RUNNING with podName/startTime, as a merge patch conditional on the At's resourceVersion:
 *      of two workers (or two replicas during a leadership hand-over) acting on the same version, exactly
 *      one succeeds; the other gets 409 Conflict and stops;
 *   2. only then create the pod, under a deterministic name (a retried create cannot make a second one),
 *      with the outcome finalizer, which holds the pod until step 3;
 *   3. status -> DONE from the pod's end (or its deletion), and only then remove the finalizer.
 *
 * A crash between 1 and 2 leaves RUNNING without a pod; since a created pod cannot vanish before 3, the
 * next reconcile knows it was never created and creates it (claimed again first, so a stale reader gets
 * 409). A claim of an earlier version (`status.podFinalizer` absent) ends Failed/PodDisappeared (README).
 *
 * Every status write is conditional on the resourceVersion it was decided from and records
 * `observedGeneration`. It goes through the runtime (`request.status`), which remembers it: the next
 * reconcile decides from the written At while the cache still shows the version it replaced, so the
 * controller does not repeat a step because its cache lags (no 409 in the steady path), and the write's
 * own watch event reconciles nothing. So the step after a claim or a finish (the grace wait for the
 * pod's event, the ttl wait) is decided here, from the written At. Should another writer's version
 * intervene, the precondition still makes any stale write fail with 409 instead of overwriting it.
 */
import type { Lister } from '@loopwright/informer';
import {
  NORMAL_PRIORITY,
  TerminalError,
  isAlreadyExists,
  isConditionTrue,
  isConflict,
  redactText,
  setCondition,
  toKubeApiError,
  type Condition,
  type ConditionInput,
  type EventRecorder,
  type Reconciler,
  type StatusWriter,
} from '@loopwright/runtime';
import type { Logger } from 'winston';
import { FIELD_MANAGER, type AtApi } from './api.ts';
import {
  POD_NOT_OWNED_RECHECK_MS,
  decide,
  observePod,
  releaseWithoutAt,
  type Action,
  type AtView,
} from './decide.ts';
import type { At } from './generated/types.ts';
import type { AtMetrics } from './metrics.ts';
import { podNameFor } from './names.ts';
import { buildPod } from './pod.ts';
import { ConditionReason, ConditionType, EventReason } from './reasons.ts';
import { AT_API_VERSION, AT_KIND, AT_OUTCOME_FINALIZER, type Pod } from './resource.ts';

/** Reported for every pod create the controller issues (the benchmark's lateness measure). */
export interface StartObservation {
  namespace: string;
  name: string;
  scheduleMs: number;
  /** When the create request was issued (epoch ms, the reconciler's clock). */
  issuedMs: number;
}

export interface AtReconcilerOptions {
  api: AtApi;
  recorder: Pick<EventRecorder, 'event'>;
  /** The label-selected pod cache of the At's namespace scope. */
  pods: Pick<Lister<Pod>, 'get'>;
  defaultImage: string;
  /** Epoch ms. Default Date.now. */
  now?: () => number;
  onStart?: (observation: StartObservation) => void;
  /** Counts each pod created and each At finished (see metrics.ts). Default: none. */
  metrics?: Pick<AtMetrics, 'podCreated' | 'finished'>;
  /** Wraps each reconcile's status writer (the bench times and counts the writes with it). */
  wrapStatusWriter?: (status: StatusWriter<At>, at: { namespace: string; name: string }) => StatusWriter<At>;
}

/** An At as the API server stores it: these fields are always set. */
type StoredAt = At & {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    deletionTimestamp?: string;
  };
};

/** A condition this controller sets; `observedGeneration` is always the generation decided from. */
type ConditionChange = Omit<ConditionInput, 'observedGeneration' | 'type' | 'reason'> & {
  type: ConditionType;
  reason: string;
};

type Result = { requeueAfterMs: number; priority?: number } | undefined;

export function createAtReconciler(options: AtReconcilerOptions): Reconciler<At> {
  return async ({ namespace, name, object, status, log, signal }) => {
    // Deleted (a delete event, or a pod event or timer for an At deleted since): its pod goes by
    // garbage collection (owner reference); there is nothing to record, and the pod is released.
    if (!object) {
      await releasePodWithoutAt(options, namespace ?? '', name, log, signal);
      return undefined;
    }
    const writer = options.wrapStatusWriter?.(status, { namespace: namespace ?? '', name }) ?? status;
    const result = await new Step(options, object as StoredAt, writer, log, signal).run();
    // Each wake-up an At asks for is a time it set coming (its schedule, a grace, a recheck): news, as a
    // watch event is. At the priority the key had, an At first seen in a restart's initial list would
    // wait behind every change when its time comes, and due Ats would no longer start in due order.
    return result && { ...result, priority: NORMAL_PRIORITY };
  };
}

async function releasePodWithoutAt(
  options: AtReconcilerOptions,
  namespace: string,
  name: string,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const podName = podNameFor(name);
  const release = releaseWithoutAt(options.pods.get(namespace, podName));
  if (!release) return;
  await options.api.releasePod({ namespace, name: podName, ...release }, signal);
  log.info('released the pod of a deleted At (removed its outcome finalizer)', { pod: podName });
}

/**
 * The claim: the status write that records a start (RUNNING, the pod's name, since when) before the pod
 * exists. A pure function of the At it is decided from and the time, so the bench's limit program sends
 * the very same body as the controller. `guarded`: the pod carries the outcome finalizer (every pod
 * buildPod makes does; only an earlier version's pod found while no claim records it does not).
 */
export function claimStatus(at: At, podName: string, now: Date, guarded = true): Record<string, unknown> {
  const generation = at.metadata?.generation ?? 0;
  const conditions = at.status?.conditions;
  return {
    phase: 'RUNNING',
    podName,
    podFinalizer: guarded ? AT_OUTCOME_FINALIZER : null,
    startTime: now.toISOString(),
    conditions: changeConditions(
      conditions,
      [
        {
          type: ConditionType.Scheduled,
          status: 'True',
          reason: ConditionReason.ScheduleReached,
          message: `schedule ${at.spec.schedule} reached`,
        },
        {
          type: ConditionType.Running,
          status: 'True',
          reason: ConditionReason.PodStarted,
          message: `pod ${podName} runs the command`,
        },
        ...clearIfSet(
          conditions,
          ConditionType.PodNotOwned,
          ConditionReason.PodNameFree,
          `pod name ${podName} is free`,
        ),
        ...clearIfSet(
          conditions,
          ConditionType.InvalidSchedule,
          ConditionReason.ScheduleValid,
          'the schedule parses',
        ),
      ],
      generation,
      now,
    ),
    observedGeneration: generation,
  };
}

/** `conditions` with each change set for `generation` (a changed status transitions at `now`). */
function changeConditions(
  conditions: readonly Condition[] | undefined,
  changes: readonly ConditionChange[],
  generation: number,
  now: Date,
): readonly Condition[] {
  return changes.reduce<readonly Condition[]>(
    (current, change) => setCondition(current, { ...change, observedGeneration: generation }, now),
    conditions ?? [],
  );
}

/** A change that sets `type` False, when it is True now; none otherwise. */
function clearIfSet(
  conditions: readonly Condition[] | undefined,
  type: ConditionType,
  reason: ConditionReason,
  message: string,
): ConditionChange[] {
  return isConditionTrue(conditions, type) ? [{ type, status: 'False', reason, message }] : [];
}

/** One reconcile of one At: decide, then perform the step. */
class Step {
  readonly #options: AtReconcilerOptions;
  readonly #at: StoredAt;
  readonly #status: StatusWriter<At>;
  readonly #view: AtView;
  readonly #podName: string;
  readonly #log: Logger;
  readonly #signal: AbortSignal;
  readonly #now: () => number;
  /** The pod this step decided from, and whether a live GET gave it (else the cache did). */
  #pod: { pod: Pod | undefined; confirmed: boolean } | undefined;
  /** The step being performed, for the log. */
  #action: Action['type'] | undefined;

  /** `pod`: the pod to decide from instead of the cache's (the pod a previous step decided from). */
  constructor(
    options: AtReconcilerOptions,
    at: StoredAt,
    status: StatusWriter<At>,
    log: Logger,
    signal: AbortSignal,
    pod?: { pod: Pod | undefined; confirmed: boolean },
  ) {
    this.#options = options;
    this.#at = at;
    this.#status = status;
    this.#view = {
      generation: at.metadata.generation ?? 0,
      deleting: at.metadata.deletionTimestamp !== undefined,
      spec: at.spec,
      status: at.status,
    };
    this.#podName = at.status?.podName ?? podNameFor(at.metadata.name);
    this.#log = log;
    this.#signal = signal;
    this.#now = options.now ?? Date.now;
    this.#pod = pod;
  }

  async run(): Promise<Result> {
    const known = this.#pod ?? {
      pod: this.#options.pods.get(this.#at.metadata.namespace, this.#podName),
      confirmed: false,
    };
    try {
      return await this.#perform(this.#decide(known.pod, known.confirmed));
    } catch (error) {
      // A stale resourceVersion: the cache has (or will get) a newer At, whose event reconciles again.
      if (isConflict(error)) {
        this.#log.debug('status patch conflicted with a newer version of the At; waiting for it', {
          action: this.#action,
        });
        return undefined;
      }
      throw error;
    }
  }

  #decide(pod: Pod | undefined, confirmed: boolean): Action {
    this.#pod = { pod, confirmed };
    const action = decide(this.#view, observePod(pod, this.#at.metadata.uid, confirmed), this.#now());
    this.#action = action.type;
    this.#log.debug('decided', {
      action: action.type,
      ...('retryAfterMs' in action ? { retryAfterMs: action.retryAfterMs } : {}),
      ...(action.type === 'nothing' ? { why: action.why } : {}),
    });
    return action;
  }

  async #perform(action: Action): Promise<Result> {
    switch (action.type) {
      case 'nothing':
        return undefined;
      case 'lookupPod': {
        // Decided again with the API server's answer, which never asks for another lookup.
        const live = await this.#options.api.getPod(this.#at.metadata.namespace, this.#podName, this.#signal);
        return this.#perform(this.#decide(live, true));
      }
      case 'wait':
        return { requeueAfterMs: action.retryAfterMs };
      case 'recordPending':
        await this.#recordPending(action.scheduleMs, action.retryAfterMs);
        return { requeueAfterMs: action.retryAfterMs };
      case 'start':
        return this.#start(action.createPod, action.guarded, action.scheduleMs);
      case 'finish':
        return this.#continueFrom(await this.#finish(action));
      case 'podNotOwned':
        if (action.report) await this.#reportPodNotOwned(this.#at.metadata.resourceVersion);
        return { requeueAfterMs: action.retryAfterMs };
      case 'invalidSchedule':
        await this.#patch({
          phase: 'PENDING',
          conditions: this.#conditions([
            {
              type: ConditionType.InvalidSchedule,
              status: 'True',
              reason: ConditionReason.InvalidSchedule,
              message: action.message,
            },
            {
              type: ConditionType.Scheduled,
              status: 'False',
              reason: ConditionReason.InvalidSchedule,
              message: 'the schedule cannot be parsed; edit spec.schedule',
            },
          ]),
        });
        this.#event('Warning', EventReason.InvalidSchedule, 'Schedule', action.message);
        // Not retried: only a spec change (a new generation) can fix it, and that change enqueues the At.
        throw new TerminalError(action.message);
      case 'deletePod':
        this.#log.info('deleting the finished pod (ttlSecondsAfterFinished passed)', { pod: this.#podName });
        await this.#options.api.deletePod(
          this.#at.metadata.namespace,
          this.#podName,
          action.uid,
          this.#signal,
        );
        return undefined;
      case 'releasePod':
        // The outcome is recorded (or the At goes): the pod may be deleted now. Its update event wakes the
        // At again (the ttl's timer, a generation to acknowledge).
        await this.#options.api.releasePod(
          {
            namespace: this.#at.metadata.namespace,
            name: this.#podName,
            uid: action.uid,
            finalizers: action.finalizers,
          },
          this.#signal,
        );
        this.#log.info('released the pod (removed its outcome finalizer)', { pod: this.#podName });
        return undefined;
      case 'observeGeneration':
        await this.#observeGeneration();
        return action.retryAfterMs === undefined ? undefined : { requeueAfterMs: action.retryAfterMs };
    }
  }

  async #recordPending(scheduleMs: number, retryAfterMs: number): Promise<void> {
    const when = new Date(scheduleMs).toISOString();
    await this.#patch({
      phase: 'PENDING',
      podName: null,
      podFinalizer: null,
      startTime: null,
      conditions: this.#conditions([
        {
          type: ConditionType.Scheduled,
          status: 'False',
          reason: ConditionReason.Waiting,
          message: `runs at ${when}`,
        },
        ...this.#clearIfSet(
          ConditionType.InvalidSchedule,
          ConditionReason.ScheduleValid,
          'the schedule parses',
        ),
        ...this.#clearIfSet(ConditionType.PodNotOwned, ConditionReason.Rescheduled, 'the schedule changed'),
      ]),
    });
    this.#log.info('waiting for the schedule', { schedule: when, retryAfterMs });
    this.#event('Normal', EventReason.Scheduled, 'Schedule', `runs at ${when}`);
  }

  async #start(createPod: boolean, guarded: boolean, scheduleMs: number): Promise<Result> {
    const reclaim = this.#at.status?.phase === 'RUNNING';
    const recorded = await this.#patch(claimStatus(this.#at, this.#podName, new Date(this.#now()), guarded));
    if (reclaim)
      this.#log.warn(
        'the claimed pod was never created (it would carry the outcome finalizer); claimed again, creating it',
        { pod: this.#podName },
      );
    this.#log.debug('recorded RUNNING; creating the pod', { pod: this.#podName });
    if (!createPod) {
      this.#log.warn(
        "found this At's own pod while the status did not record it; recorded it, not creating another",
        { pod: this.#podName },
      );
      return this.#continueFrom(recorded);
    }
    const issuedMs = this.#now();
    const { namespace, name } = this.#at.metadata;
    this.#options.onStart?.({ namespace, name, scheduleMs, issuedMs });
    try {
      await this.#options.api.createPod(
        buildPod(this.#at, this.#podName, { defaultImage: this.#options.defaultImage }),
        this.#signal,
      );
    } catch (error) {
      return this.#createFailed(error, recorded);
    }
    this.#options.metrics?.podCreated(scheduleMs, this.#now());
    this.#log.info('started the command', { pod: this.#podName, lateMs: issuedMs - scheduleMs });
    this.#event('Normal', EventReason.Started, 'CreatePod', `created pod ${this.#podName}`);
    return this.#continueFrom(recorded);
  }

  /**
   * The step after a status write, decided from the At as written: the write's own watch event does not
   * reconcile the At again (the runtime knows it for its echo), so what that reconcile would have
   * decided (wait for the pod's event within the start grace, or for the ttl) is decided here. Each
   * write moves the phase forward (RUNNING, then DONE), so the chain ends.
   */
  #continueFrom(written: At): Promise<Result> {
    return new Step(
      this.#options,
      written as StoredAt,
      this.#status,
      this.#log,
      this.#signal,
      this.#pod,
    ).run();
  }

  /**
   * After RUNNING was recorded (`recorded`: the At as that write left it): undo it only when the create
   * certainly made no pod of ours. The undo is based on `recorded`, so its conditions transition from
   * RUNNING (Scheduled's lastTransitionTime is when this attempt failed, which paces the retry).
   */
  async #createFailed(error: unknown, recorded: At): Promise<Result> {
    const { namespace } = this.#at.metadata;
    const resourceVersion = recorded.metadata?.resourceVersion ?? '';
    if (isAlreadyExists(error)) {
      const existing = await this.#options.api.getPod(namespace, this.#podName, this.#signal);
      const owner = existing?.metadata?.ownerReferences?.find((ref) => ref.controller === true);
      if (existing && owner?.uid === this.#at.metadata.uid) {
        this.#log.info('the pod already exists and is ours (an earlier create went through)', {
          pod: this.#podName,
        });
        return this.#continueFrom(recorded);
      }
      // Not ours (or gone again): nothing of ours runs under this name, so going back to PENDING is safe.
      await this.#reportPodNotOwned(resourceVersion, recorded);
      return { requeueAfterMs: POD_NOT_OWNED_RECHECK_MS };
    }
    const status = toKubeApiError(error)?.status;
    if (status !== undefined && status >= 400 && status < 500) {
      // The API server refused the request (quota, admission, invalid): no pod exists; back to PENDING,
      // and `decide` retries POD_CREATE_RETRY_MS after this Scheduled=False transition.
      const message = `creating pod ${this.#podName} failed: ${(error as Error).message}`;
      await this.#patch(
        {
          phase: 'PENDING',
          podName: null,
          podFinalizer: null,
          startTime: null,
          conditions: this.#conditions(
            [
              {
                type: ConditionType.Scheduled,
                status: 'False',
                reason: ConditionReason.PodCreateFailed,
                message,
              },
              {
                type: ConditionType.Running,
                status: 'False',
                reason: ConditionReason.PodCreateFailed,
                message,
              },
            ],
            recorded,
          ),
        },
        resourceVersion,
      );
      this.#event('Warning', EventReason.PodCreateFailed, 'CreatePod', message);
    }
    // Otherwise (network error, 5xx) the pod may exist: RUNNING stays, the next reconcile looks it up.
    throw error;
  }

  /** `revertFrom`: the At as the RUNNING write left it, when that write is to be undone. */
  async #reportPodNotOwned(resourceVersion: string, revertFrom?: At): Promise<void> {
    const revert = revertFrom !== undefined;
    const message = `pod ${this.#podName} exists and is not controlled by this At; it is not adopted. Delete or rename it to let the At run`;
    const reason = ConditionReason.PodNotOwned;
    await this.#patch(
      {
        phase: 'PENDING',
        ...(revert ? { podName: null, podFinalizer: null, startTime: null } : {}),
        conditions: this.#conditions(
          [
            { type: ConditionType.PodNotOwned, status: 'True', reason, message },
            { type: ConditionType.Scheduled, status: 'False', reason, message },
            ...(revert ? [{ type: ConditionType.Running, status: 'False', reason, message } as const] : []),
          ],
          revertFrom,
        ),
      },
      resourceVersion,
    );
    this.#log.warn('pod name taken by a pod this At does not control', {
      pod: this.#podName,
      retryAfterMs: POD_NOT_OWNED_RECHECK_MS,
    });
    this.#event('Warning', EventReason.PodNotOwned, 'CreatePod', message);
  }

  /** Resolves with the At as the DONE write left it. */
  async #finish(action: Extract<Action, { type: 'finish' }>): Promise<At> {
    const succeeded = action.outcome === 'Succeeded';
    const detail = `${action.reason}${action.exitCode === undefined ? '' : `, exit code ${action.exitCode}`}${action.message ? `: ${action.message}` : ''}`;
    const written = await this.#patch({
      phase: 'DONE',
      outcome: action.outcome,
      exitCode: action.exitCode ?? null,
      reason: action.reason,
      // The container's termination message: whatever the command wrote, redacted as conditions are.
      message: redactText(action.message),
      completionTime: new Date(this.#now()).toISOString(),
      conditions: this.#conditions([
        {
          type: ConditionType.Running,
          status: 'False',
          reason: succeeded ? ConditionReason.Completed : action.conditionReason,
          message: detail,
        },
        {
          type: succeeded ? ConditionType.Succeeded : ConditionType.Failed,
          status: 'True',
          reason: action.conditionReason,
          message: detail,
        },
      ]),
    });
    // Counted on the write that made it DONE, which succeeds once per At (it is conditional on the
    // version decided from): not on every reconcile that sees it DONE, nor by standbys or after a restart.
    this.#options.metrics?.finished(action.outcome);
    this.#log.info('finished', { outcome: action.outcome, exitCode: action.exitCode, reason: action.reason });
    if (succeeded) this.#event('Normal', EventReason.Succeeded, 'RunCommand', detail);
    else
      this.#event(
        'Warning',
        action.reason === ConditionReason.PodDisappeared ? EventReason.PodDisappeared : EventReason.Failed,
        'RunCommand',
        detail,
      );
    return written;
  }

  /**
   * The spec changed and nothing else is to be written: every condition was evaluated again for the new
   * generation and still holds, so only the generations move (`lastTransitionTime` stays).
   */
  async #observeGeneration(): Promise<void> {
    const generation = this.#view.generation;
    const conditions = this.#at.status?.conditions?.map((condition) => ({
      ...condition,
      observedGeneration: generation,
    }));
    await this.#patch(conditions ? { conditions } : {});
    this.#log.info('recorded the new generation as observed; the spec change needs no other step', {
      generation,
    });
  }

  /** `base`: the At whose conditions change; default the one this reconcile decided from. */
  #conditions(changes: readonly ConditionChange[], base: At = this.#at): readonly Condition[] {
    return changeConditions(base.status?.conditions, changes, this.#view.generation, new Date(this.#now()));
  }

  #clearIfSet(type: ConditionType, reason: ConditionReason, message: string): ConditionChange[] {
    return clearIfSet(this.#at.status?.conditions, type, reason, message);
  }

  /**
   * Every status write records the generation it was decided from, and is conditional on a version.
   * The runtime remembers the At it returns until the cache shows it, so the next reconcile decides
   * from it.
   */
  #patch(status: Record<string, unknown>, resourceVersion = this.#at.metadata.resourceVersion): Promise<At> {
    return this.#status.patch(
      { merge: { status: { ...status, observedGeneration: this.#view.generation } } },
      { resourceVersion, fieldManager: FIELD_MANAGER, signal: this.#signal },
    );
  }

  #event(type: 'Normal' | 'Warning', reason: EventReason, action: string, note: string): void {
    const { namespace, name, uid } = this.#at.metadata;
    this.#options.recorder.event(
      { apiVersion: AT_API_VERSION, kind: AT_KIND, namespace, name, uid },
      { type, reason, action, note },
    );
  }
}
