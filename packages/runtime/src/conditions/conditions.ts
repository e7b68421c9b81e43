/**
 * `metav1.Condition` bookkeeping with apimachinery's `meta.SetStatusCondition` semantics, for the
 * `status.conditions` of any resource.
 */
import { truncateUtf8 } from '../events/truncate.ts';
import { redactText } from '../log/redact.ts';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** One entry of `status.conditions`, as `metav1.Condition` serialises it. */
export interface Condition {
  /** CamelCase, or a qualified name (`example.com/Ready`); one condition per type. */
  type: string;
  status: ConditionStatus;
  /** The `metadata.generation` the condition was computed from. */
  observedGeneration?: number;
  /** When `status` last changed: `metav1.Time`, RFC 3339 in UTC with whole seconds. */
  lastTransitionTime: string;
  /** CamelCase, for machines: why the condition is in this status. */
  reason: string;
  /** For humans; may be empty. */
  message: string;
}

/** What a controller states about one condition; `message` defaults to `''` (Go's zero value). */
export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
  observedGeneration?: number;
}

/** The limits the API server enforces on `metav1.Condition` (its OpenAPI schema). */
const CONDITION_TYPE_MAX_LENGTH = 316;
const CONDITION_REASON_MAX_LENGTH = 1024;
const CONDITION_MESSAGE_MAX_LENGTH = 32768;
const TYPE_PATTERN =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const STATUSES: readonly string[] = ['True', 'False', 'Unknown'] satisfies ConditionStatus[];

/**
 * Whether `reason` is one the API server accepts on a condition: CamelCase (letters, digits, `_`, `,`,
 * `:`), at most 1024 characters. A reason a controller passes on from elsewhere (a pod's, a third-party
 * API's) must be checked with it first: an invalid one throws {@link InvalidConditionError}, and the
 * status write it belonged to is never made.
 */
export function isConditionReason(reason: string): boolean {
  return reason.length <= CONDITION_REASON_MAX_LENGTH && REASON_PATTERN.test(reason);
}

/**
 * A condition the API server would reject (and with it the whole status write). Type, status and
 * reason are a controller's own constants, so this is a bug to fix, reported before the request.
 */
export class InvalidConditionError extends Error {
  override readonly name = 'InvalidConditionError';
}

/**
 * `conditions` with `input` applied, as `meta.SetStatusCondition`:
 * - a new type is appended (order is kept, so status diffs stay small) with `lastTransitionTime: now`;
 * - an existing one gets the new status, reason, message and observedGeneration in place;
 *   `lastTransitionTime` becomes `now` only when the status changes.
 *
 * Never mutates its input (it is usually the cache's object): it returns a new list when something
 * changed, and `conditions` itself when nothing did, so `result === conditions` says that no status
 * write is needed (apimachinery's `changed == false`).
 *
 * The message is redacted as log lines are (it often carries third-party error text, and status is
 * readable by anyone who may read the object), then cut to 32768
 * bytes of UTF-8 (custom resources count characters, built-in validation counts bytes; bytes satisfy
 * both): a long error text must not get the whole status write rejected. An invalid type, status,
 * reason or observedGeneration throws {@link InvalidConditionError}.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
): readonly Condition[] {
  validate(input);
  const message = truncateUtf8(redactText(input.message ?? ''), CONDITION_MESSAGE_MAX_LENGTH);
  const list = conditions ?? [];
  const index = list.findIndex((condition) => condition.type === input.type);
  const existing = list[index];
  if (existing === undefined) return [...list, condition(input, message, metav1Time(now))];
  if (
    existing.status === input.status &&
    existing.reason === input.reason &&
    existing.message === message &&
    existing.observedGeneration === input.observedGeneration
  )
    return list;
  const transitioned = existing.status === input.status ? existing.lastTransitionTime : metav1Time(now);
  return list.with(index, condition(input, message, transitioned));
}

/** `conditions` without the condition of `type`; `conditions` itself when there is none. */
export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): readonly Condition[] | undefined {
  return conditions?.some((condition) => condition.type === type)
    ? conditions.filter((condition) => condition.type !== type)
    : conditions;
}

/** The condition of `type`, from any condition list (a Node's or a Pod's too). */
export function findCondition<C extends { type: string }>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/** true when the condition of `type` exists with status `True`. */
export function isConditionTrue(
  conditions: readonly { type: string; status: string }[] | undefined,
  type: string,
): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

function condition(input: ConditionInput, message: string, lastTransitionTime: string): Condition {
  // metav1.Condition's field order, so written status reads like any other controller's.
  return {
    type: input.type,
    status: input.status,
    ...(input.observedGeneration === undefined ? {} : { observedGeneration: input.observedGeneration }),
    lastTransitionTime,
    reason: input.reason,
    message,
  };
}

/** `metav1.Time` as it serialises: RFC 3339, UTC, fractional seconds cut off (as Go's formatting does). */
function metav1Time(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, 'Z');
}

function validate(input: ConditionInput): void {
  const problems: string[] = [];
  const { type, status, reason, observedGeneration } = input;
  if (type.length > CONDITION_TYPE_MAX_LENGTH || !TYPE_PATTERN.test(type))
    problems.push(
      `type ${JSON.stringify(type)} must be a qualified name (CamelCase or prefix/Name) of at most ${CONDITION_TYPE_MAX_LENGTH} characters`,
    );
  if (!STATUSES.includes(status))
    problems.push(`status ${JSON.stringify(status)} must be one of True, False, Unknown`);
  if (!isConditionReason(reason))
    problems.push(
      `reason ${JSON.stringify(reason)} must be CamelCase (${REASON_PATTERN.source}) of at most ${CONDITION_REASON_MAX_LENGTH} characters`,
    );
  if (
    observedGeneration !== undefined &&
    !(Number.isSafeInteger(observedGeneration) && observedGeneration >= 0)
  )
    problems.push(`observedGeneration ${observedGeneration} must be a non-negative integer`);
  if (problems.length > 0)
    throw new InvalidConditionError(`invalid condition ${JSON.stringify(type)}: ${problems.join('; ')}`);
}
