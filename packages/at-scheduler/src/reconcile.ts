/**
 * Performs what `decide` chose, against the API. The order of writes is the at-most-once design:
 *
 *   1. status -> RUNNING with podName/startTime, as a merge patch conditional on the At's resourceVersion:
 *      of two workers (or two replicas during a leadership hand-over) acting on the same version, exactly
 *      one succeeds; the other gets 409 Conflict and stops;
 *   2. only then create the pod, under a deterministic name (a retried create cannot make a second one).
 *
 * A crash between 1 and 2 leaves RUNNING without a pod; the next reconcile cannot tell "never created"
 * from "deleted" and ends the At Failed/PodDisappeared rather than risk a second run (see README).
 */
import type { Lister } from '@loopwright/informer';
import {
  TerminalError,
  isAlreadyExists,
  isConflict,
  redactText,
  toKubeApiError,
  type EventRecorder,
  type Reconciler,
} from '@loopwright/runtime';
import type { Logger } from 'winston';
import type { AtApi } from './api.ts';
import { ConditionType, findCondition, setConditions, type ConditionChange } from './conditions.ts';
import { POD_CREATE_FAILED, decide, observePod, type Action, type AtView } from './decide.ts';
import type { At } from './generated/at-types.ts';
import { podNameFor } from './names.ts';
import { buildPod } from './pod.ts';
import { AT_API_VERSION, AT_KIND, type Pod } from './resource.ts';

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
}

type NamedAt = At & {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    deletionTimestamp?: string;
  };
};

export function createAtReconciler(options: AtReconcilerOptions): Reconciler<At> {
  const now = options.now ?? Date.now;
  return async ({ object, log, signal }) => {
    // Deleted: its pod goes with it (garbage collection via the owner reference).
    if (!object) return undefined;
    const at = object as NamedAt;
    const { namespace, name, uid } = at.metadata;
    const podName = at.status?.podName ?? podNameFor(name);
    const view: AtView = {
      generation: at.metadata.generation ?? 0,
      deleting: at.metadata.deletionTimestamp !== undefined,
      spec: at.spec,
      status: at.status,
    };
    let action = decide(view, observePod(options.pods.get(namespace, podName), uid, false), now());
    if (action.type === 'lookupPod') {
      const live = await options.api.getPod(namespace, podName, signal);
      action = decide(view, observePod(live, uid, true), now());
    }
    log.debug('decided', { action });
    const step = new Step(options, at, podName, log, signal, now);
    try {
      return await step.perform(action);
    } catch (error) {
      // A stale resourceVersion: the cache has (or will get) a newer At, whose event reconciles again.
      if (isConflict(error)) {
        log.debug('status patch conflicted with a newer version of the At; waiting for it', {
          action: action.type,
        });
        return undefined;
      }
      throw error;
    }
  };
}

class Step {
  readonly #options: AtReconcilerOptions;
  readonly #at: NamedAt;
  readonly #podName: string;
  readonly #log: Logger;
  readonly #signal: AbortSignal;
  readonly #now: () => number;

  constructor(
    options: AtReconcilerOptions,
    at: NamedAt,
    podName: string,
    log: Logger,
    signal: AbortSignal,
    now: () => number,
  ) {
    this.#options = options;
    this.#at = at;
    this.#podName = podName;
    this.#log = log;
    this.#signal = signal;
    this.#now = now;
  }

  async perform(action: Action): Promise<{ requeueAfterMs: number } | undefined> {
    switch (action.type) {
      case 'nothing':
      case 'lookupPod':
        return undefined;
      case 'wait':
        if (action.recordPending && action.scheduleMs !== undefined)
          await this.#recordPending(action.scheduleMs);
        return { requeueAfterMs: action.afterMs };
      case 'start':
        return this.#start(action.createPod, action.scheduleMs);
      case 'finish':
        await this.#finish(action);
        return undefined;
      case 'podNotOwned':
        if (action.report) await this.#reportPodNotOwned(this.#at.metadata.resourceVersion);
        return { requeueAfterMs: action.recheckAfterMs };
      case 'invalidSchedule':
        await this.#patch({
          phase: 'PENDING',
          conditions: this.#conditions([
            {
              type: ConditionType.InvalidSchedule,
              status: 'True',
              reason: 'InvalidSchedule',
              message: action.message,
            },
            {
              type: ConditionType.Scheduled,
              status: 'False',
              reason: 'InvalidSchedule',
              message: 'the schedule cannot be parsed; edit spec.schedule',
            },
          ]),
        });
        this.#event('Warning', 'InvalidSchedule', 'Schedule', action.message);
        // Not retried: only a spec change (a new generation) can fix it, and that change enqueues the At.
        throw new TerminalError(action.message);
      case 'deletePod':
        this.#log.info('deleting the finished pod (ttlSecondsAfterFinished passed)', { pod: this.#podName });
        await this.#options.api.deletePod(
          this.#at.metadata.namespace,
          this.#podName,
          this.#podUid() ?? '',
          this.#signal,
        );
        return undefined;
    }
  }

  async #recordPending(scheduleMs: number): Promise<void> {
    const when = new Date(scheduleMs).toISOString();
    await this.#patch({
      phase: 'PENDING',
      podName: null,
      startTime: null,
      conditions: this.#conditions([
        { type: ConditionType.Scheduled, status: 'False', reason: 'Waiting', message: `runs at ${when}` },
        ...this.#clearIfSet(ConditionType.InvalidSchedule, 'ScheduleValid', 'the schedule parses'),
        ...this.#clearIfSet(ConditionType.PodNotOwned, 'Rescheduled', 'the schedule changed'),
      ]),
    });
    this.#log.info('waiting for the schedule', { schedule: when });
    this.#event('Normal', 'Scheduled', 'Schedule', `runs at ${when}`);
  }

  async #start(createPod: boolean, scheduleMs: number): Promise<{ requeueAfterMs: number } | undefined> {
    const { namespace } = this.#at.metadata;
    const startedAt = new Date(this.#now()).toISOString();
    const recorded = await this.#patch({
      phase: 'RUNNING',
      podName: this.#podName,
      startTime: startedAt,
      conditions: this.#conditions([
        {
          type: ConditionType.Scheduled,
          status: 'True',
          reason: 'ScheduleReached',
          message: `schedule ${this.#at.spec.schedule} reached`,
        },
        {
          type: ConditionType.Running,
          status: 'True',
          reason: 'PodStarted',
          message: `pod ${this.#podName} runs the command`,
        },
        ...this.#clearIfSet(ConditionType.PodNotOwned, 'PodNameFree', `pod name ${this.#podName} is free`),
        ...this.#clearIfSet(ConditionType.InvalidSchedule, 'ScheduleValid', 'the schedule parses'),
      ]),
    });
    if (!createPod) {
      this.#log.warn(
        "found this At's own pod while the status did not record it; recorded it, not creating another",
        { pod: this.#podName },
      );
      return undefined;
    }
    const issuedMs = this.#now();
    this.#options.onStart?.({ namespace, name: this.#at.metadata.name, scheduleMs, issuedMs });
    try {
      await this.#options.api.createPod(
        namespace,
        buildPod(this.#at, this.#podName, { defaultImage: this.#options.defaultImage }),
        this.#signal,
      );
    } catch (error) {
      return this.#createFailed(error, recorded);
    }
    this.#log.info('started the command', { pod: this.#podName, lateMs: issuedMs - scheduleMs });
    this.#event('Normal', 'Started', 'CreatePod', `created pod ${this.#podName}`);
    return undefined;
  }

  /**
   * After RUNNING was recorded (`recorded`: the At as that write left it): undo it only when the create
   * certainly made no pod of ours. The undo is based on `recorded`, so its conditions transition from
   * RUNNING (Scheduled's lastTransitionTime is when this attempt failed, which paces the retry).
   */
  async #createFailed(error: unknown, recorded: At): Promise<{ requeueAfterMs: number } | undefined> {
    const { namespace } = this.#at.metadata;
    const resourceVersion = recorded.metadata?.resourceVersion ?? '';
    if (isAlreadyExists(error)) {
      const existing = await this.#options.api.getPod(namespace, this.#podName, this.#signal);
      const owner = existing?.metadata?.ownerReferences?.find((ref) => ref.controller === true);
      if (existing && owner?.uid === this.#at.metadata.uid) {
        this.#log.info('the pod already exists and is ours (an earlier create went through)', {
          pod: this.#podName,
        });
        return undefined;
      }
      // Not ours (or gone again): nothing of ours runs under this name, so going back to PENDING is safe.
      await this.#reportPodNotOwned(resourceVersion, recorded);
      return { requeueAfterMs: 10_000 };
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
          startTime: null,
          conditions: this.#conditions(
            [
              { type: ConditionType.Scheduled, status: 'False', reason: POD_CREATE_FAILED, message },
              { type: ConditionType.Running, status: 'False', reason: POD_CREATE_FAILED, message },
            ],
            recorded,
          ),
        },
        resourceVersion,
      );
      this.#event('Warning', POD_CREATE_FAILED, 'CreatePod', message);
    }
    // Otherwise (network error, 5xx) the pod may exist: RUNNING stays, the next reconcile looks it up.
    throw error;
  }

  /** `revertFrom`: the At as the RUNNING write left it, when that write is to be undone. */
  async #reportPodNotOwned(resourceVersion: string, revertFrom?: At): Promise<void> {
    const revert = revertFrom !== undefined;
    const message = `pod ${this.#podName} exists and is not controlled by this At; it is not adopted. Delete or rename it to let the At run`;
    await this.#patch(
      {
        phase: 'PENDING',
        ...(revert ? { podName: null, startTime: null } : {}),
        conditions: this.#conditions(
          [
            { type: ConditionType.PodNotOwned, status: 'True', reason: 'PodNotOwned', message },
            { type: ConditionType.Scheduled, status: 'False', reason: 'PodNotOwned', message },
            ...(revert
              ? [{ type: ConditionType.Running, status: 'False', reason: 'PodNotOwned', message } as const]
              : []),
          ],
          revertFrom,
        ),
      },
      resourceVersion,
    );
    this.#log.warn('pod name taken by a pod this At does not control', { pod: this.#podName });
    this.#event('Warning', 'PodNotOwned', 'CreatePod', message);
  }

  async #finish(action: Extract<Action, { type: 'finish' }>): Promise<void> {
    const succeeded = action.outcome === 'Succeeded';
    const detail = `${action.reason}${action.exitCode === undefined ? '' : `, exit code ${action.exitCode}`}${action.message ? `: ${action.message}` : ''}`;
    await this.#patch({
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
          reason: succeeded ? 'Completed' : action.reason,
          message: detail,
        },
        succeeded
          ? { type: ConditionType.Succeeded, status: 'True', reason: action.reason, message: detail }
          : { type: ConditionType.Failed, status: 'True', reason: action.reason, message: detail },
      ]),
    });
    this.#log.info('finished', { outcome: action.outcome, exitCode: action.exitCode, reason: action.reason });
    if (succeeded) this.#event('Normal', 'Succeeded', 'RunCommand', detail);
    else
      this.#event(
        'Warning',
        action.reason === 'PodDisappeared' ? 'PodDisappeared' : 'Failed',
        'RunCommand',
        detail,
      );
  }

  #podUid(): string | undefined {
    return this.#options.pods.get(this.#at.metadata.namespace, this.#podName)?.metadata?.uid;
  }

  /** `base`: the At whose conditions change; default the one this reconcile decided from. */
  #conditions(changes: ConditionChange[], base: At = this.#at): ReturnType<typeof setConditions> {
    return setConditions(
      base.status?.conditions,
      changes,
      this.#at.metadata.generation ?? 0,
      new Date(this.#now()).toISOString(),
    );
  }

  #clearIfSet(type: ConditionType, reason: string, message: string): ConditionChange[] {
    return findCondition(this.#at.status?.conditions, type)?.status === 'True'
      ? [{ type, status: 'False', reason, message }]
      : [];
  }

  #patch(status: Record<string, unknown>, resourceVersion = this.#at.metadata.resourceVersion): Promise<At> {
    return this.#options.api.patchAtStatus(
      this.#at.metadata.namespace,
      this.#at.metadata.name,
      { ...status, observedGeneration: this.#at.metadata.generation ?? 0 },
      resourceVersion,
      this.#signal,
    );
  }

  #event(type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    const { namespace, name, uid } = this.#at.metadata;
    this.#options.recorder.event(
      { apiVersion: AT_API_VERSION, kind: AT_KIND, namespace, name, uid },
      { type, reason, action, note },
    );
  }
}
