/**
 * The names the At controller writes for machines to read: Event reasons, condition types, and the
 * reasons it coins for conditions and `status.reason`. Clients (alerts, `kubectl wait`, dashboards)
 * match on them, so each is spelled once, here.
 */

/** `reason` of the Events regarding an At (`events.k8s.io/v1`). */
export const EventReason = {
  /** Normal: recorded PENDING; the note says when it runs. */
  Scheduled: 'Scheduled',
  /** Normal: the pod was created. */
  Started: 'Started',
  /** Normal: the command exited 0. */
  Succeeded: 'Succeeded',
  /** Warning: the command failed (or its pod did: Evicted, OOMKilled...). */
  Failed: 'Failed',
  /** Warning: the recorded pod vanished before reporting completion; it is not re-created. */
  PodDisappeared: 'PodDisappeared',
  /** Warning: a pod this At does not control holds the pod name. */
  PodNotOwned: 'PodNotOwned',
  /** Warning: the API server refused the pod (4xx); retried later. */
  PodCreateFailed: 'PodCreateFailed',
  /** Warning: the stored spec.schedule does not parse. */
  InvalidSchedule: 'InvalidSchedule',
} as const;
export type EventReason = (typeof EventReason)[keyof typeof EventReason];

/** `type` of the At's `status.conditions`. */
export const ConditionType = {
  /** True once the schedule was reached and the command started; False while waiting. */
  Scheduled: 'Scheduled',
  /** True while the pod is recorded and not finished. */
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  /** True while a pod with the At's pod name exists that this At does not control. */
  PodNotOwned: 'PodNotOwned',
  /** True while the stored spec.schedule cannot be parsed (for its observedGeneration). */
  InvalidSchedule: 'InvalidSchedule',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/**
 * The reasons the controller itself gives, in conditions and in `status.reason`. (A finished pod's own
 * reason, such as `Error`, `OOMKilled` or `Evicted`, is passed on as the pod reports it.)
 */
export const ConditionReason = {
  /** Scheduled=False: the schedule is in the future. */
  Waiting: 'Waiting',
  /** Scheduled=True. */
  ScheduleReached: 'ScheduleReached',
  /** Running=True. */
  PodStarted: 'PodStarted',
  /** Running=False and status.reason of a command that exited 0 without a container reason. */
  Completed: 'Completed',
  /** status.reason of a failed pod that gives no reason of its own. */
  Failed: 'Failed',
  /** Failed=True: the recorded pod is gone (or replaced) without reporting completion. */
  PodDisappeared: 'PodDisappeared',
  /** Failed=True: the pod was deleted before it reported completion (and gave no reason of its own). */
  PodDeleted: 'PodDeleted',
  /** Scheduled=False, Running=False: the API server refused the pod; paces the retry. */
  PodCreateFailed: 'PodCreateFailed',
  /** PodNotOwned=True (and Scheduled=False). */
  PodNotOwned: 'PodNotOwned',
  /** PodNotOwned=False: the pod name is free again. */
  PodNameFree: 'PodNameFree',
  /** PodNotOwned=False: a new schedule, so the old report no longer applies. */
  Rescheduled: 'Rescheduled',
  /** InvalidSchedule=True (and Scheduled=False). */
  InvalidSchedule: 'InvalidSchedule',
  /** InvalidSchedule=False: the schedule was fixed. */
  ScheduleValid: 'ScheduleValid',
} as const;
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];
