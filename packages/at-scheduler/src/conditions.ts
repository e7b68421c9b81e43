/** Kubernetes-style conditions (`metav1.Condition`) on the At's status. */
import { redactText } from '@loopwright/runtime';
import type { AtStatusCondition } from './generated/at-types.ts';

export const ConditionType = {
  /** True once the schedule was reached and the command started; False while waiting. */
  Scheduled: 'Scheduled',
  /** True while the pod is recorded and not finished. */
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  /** True while a pod with the At's pod name exists that this At does not control. */
  PodNotOwned: 'PodNotOwned',
  /** True while the stored spec.schedule cannot be parsed (for observedGeneration). */
  InvalidSchedule: 'InvalidSchedule',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

export interface ConditionChange {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * Returns `conditions` with each change applied, as apimachinery's `meta.SetStatusCondition`:
 * `lastTransitionTime` moves only when the status changes. A new list; the input (the cache's) is untouched.
 * Messages are redacted as log lines are: they carry API errors and container output, and status is
 * readable by anyone who may read the At.
 */
export function setConditions(
  conditions: readonly AtStatusCondition[] | undefined,
  changes: readonly ConditionChange[],
  generation: number,
  now: string,
): AtStatusCondition[] {
  const result = (conditions ?? []).map((condition) => ({ ...condition }));
  for (const { message, ...rest } of changes) {
    const change = { ...rest, message: redactText(message) };
    const existing = result.find((condition) => condition.type === change.type);
    if (!existing) {
      result.push({ ...change, observedGeneration: generation, lastTransitionTime: now });
      continue;
    }
    if (existing.status !== change.status) existing.lastTransitionTime = now;
    existing.status = change.status;
    existing.reason = change.reason;
    existing.message = change.message;
    existing.observedGeneration = generation;
  }
  return result;
}

export function findCondition(
  conditions: readonly AtStatusCondition[] | undefined,
  type: ConditionType,
): AtStatusCondition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

export function isConditionTrue(
  conditions: readonly AtStatusCondition[] | undefined,
  type: ConditionType,
): boolean {
  return findCondition(conditions, type)?.status === 'True';
}
