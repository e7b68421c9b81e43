/**
 * The status most controllers report: `observedGeneration` and `status.conditions`. What one reconcile
 * writes, if anything, and which conditions it transitions (each worth an Event), so a controller
 * writes only when its status would change and announces each change once.
 */
import { findCondition, setCondition, type Condition, type ConditionInput } from './conditions.ts';

/** The part of a status this helper reads. */
export interface ConditionsStatus {
  observedGeneration?: number;
  conditions?: readonly Condition[];
}

export interface ConditionsUpdate {
  /** The status to merge-patch; undefined when the current status already says all of it. */
  status: { observedGeneration: number; conditions: readonly Condition[] } | undefined;
  /**
   * The conditions set for the first time or whose status or reason changed, in input order: a
   * message or generation alone is no transition.
   */
  transitions: readonly Condition[];
}

/**
 * `current` with every input condition set for `generation` (`setCondition`, so `lastTransitionTime`
 * moves only with the status) and `observedGeneration: generation`. The conditions not in `inputs`
 * are kept as they are.
 */
export function updateConditions(
  current: ConditionsStatus | undefined,
  generation: number,
  inputs: readonly Omit<ConditionInput, 'observedGeneration'>[],
  now: Date,
): ConditionsUpdate {
  const before = current?.conditions;
  let conditions = before;
  const transitions: Condition[] = [];
  for (const input of inputs) {
    const previous = findCondition(conditions, input.type);
    conditions = setCondition(conditions, { ...input, observedGeneration: generation }, now);
    const next = findCondition(conditions, input.type);
    if (next && (previous?.status !== next.status || previous.reason !== next.reason)) transitions.push(next);
  }
  // setCondition returns its input when nothing changed: identity says whether any condition did.
  const unchanged = conditions === before && current?.observedGeneration === generation;
  return {
    status: unchanged ? undefined : { observedGeneration: generation, conditions: conditions ?? [] },
    transitions,
  };
}
