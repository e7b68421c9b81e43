/** `metav1.Condition` bookkeeping: a condition's lastTransitionTime changes only when its status does. */
import { redactText } from '@loopwright/runtime';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message?: string;
}

export const ConditionType = { Ready: 'Ready', Paused: 'Paused', RequestSent: 'RequestSent' } as const;

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/**
 * A copy of `conditions` with `update` applied (added, or replaced keeping the transition time when the
 * status is unchanged). The message is redacted as log lines are: it often carries Mailgun's error text,
 * which may echo the request's Authorization header, and status is readable by anyone who may read the object.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionInput,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === update.type);
  const previous = index < 0 ? undefined : list[index];
  const next: Condition = {
    ...update,
    ...(update.message === undefined ? {} : { message: redactText(update.message) }),
    lastTransitionTime:
      previous && previous.status === update.status
        ? previous.lastTransitionTime
        : now.toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  if (next.message === undefined) delete next.message;
  if (index < 0) list.push(next);
  else list[index] = next;
  return list;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Same conditions ignoring transition times: a status patch is skipped when nothing would change. */
export function sameConditions(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const strip = (list: readonly Condition[] | undefined): string =>
    JSON.stringify(
      [...(list ?? [])]
        .map((condition) => ({ ...condition, lastTransitionTime: '' }))
        .sort((x, y) => x.type.localeCompare(y.type)),
    );
  return strip(a) === strip(b);
}
