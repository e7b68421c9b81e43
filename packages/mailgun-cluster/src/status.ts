/**
 * What status reports: the conditions for each outcome (`RequestSent`, `Ready`, `Paused`), the Cluster
 * API v1beta2 contract fields (`initialization.provisioned`, `observedGeneration`) and the status
 * patch that writes them, which a reconcile skips when it would change nothing.
 */
import { findCondition, setCondition, type Condition, type ConditionInput } from '@loopwright/runtime';
import { MISCONFIGURED_HINT, type MailgunError } from './mailgun.ts';
import { ConditionType, PausedReason, ReadyReason, RequestSentReason } from './reasons.ts';
import type { RequestStatus, SendAttempt, StoredCondition } from './resource.ts';

/** The facts every condition and contract field of one reconcile is computed from. */
export interface Observed {
  /** `metadata.generation` of the object the decision was made from. */
  generation: number | undefined;
  /** Whoever fulfils the request filled in the spec (`controlPlaneEndpoint`, `providerID`). */
  fulfilled: boolean;
}

/** Conditions to set, plus fields written even when the conditions do not change. */
export interface StatusChange {
  conditions: readonly ConditionInput[];
  fields?: StatusFields;
  /** Paused: only the conditions are written; the contract fields keep what they said before. */
  paused?: boolean;
}

/** `sendAttempt: null` releases the attempt (a merge patch deletes a null field). */
export interface StatusFields {
  messageID?: string;
  sendAttempt?: SendAttempt | null;
}

/** The body of a merge patch of the status subresource. */
export interface StatusPatch {
  conditions: readonly Condition[];
  messageID?: string;
  sendAttempt?: SendAttempt | null;
  observedGeneration?: number | undefined;
  initialization?: { provisioned: boolean };
}

export function pausedCondition(observed: Observed): ConditionInput {
  return {
    type: ConditionType.Paused,
    status: 'True',
    reason: PausedReason.Paused,
    message: 'Cluster.spec.paused or the cluster.x-k8s.io/paused annotation is set',
    observedGeneration: observed.generation,
  };
}

export function acceptedCondition(messageID: string, observed: Observed): ConditionInput {
  return {
    type: ConditionType.RequestSent,
    status: 'True',
    reason: RequestSentReason.Accepted,
    message: `Mailgun accepted the request mail ${messageID}`,
    observedGeneration: observed.generation,
  };
}

export function sendingCondition(attempt: SendAttempt, observed: Observed): ConditionInput {
  return {
    type: ConditionType.RequestSent,
    status: 'Unknown',
    reason: RequestSentReason.Sending,
    message: `sending the request mail (attempt ${attempt.id})`,
    observedGeneration: observed.generation,
  };
}

/** An attempt without a recorded id, young enough that its `accepted` event may still come. */
export function confirmingDeliveryCondition(attempt: SendAttempt, observed: Observed): ConditionInput {
  return {
    type: ConditionType.RequestSent,
    status: 'Unknown',
    reason: RequestSentReason.ConfirmingDelivery,
    message: `attempt ${attempt.id} has no recorded message id; checking Mailgun's events before resending`,
    observedGeneration: observed.generation,
  };
}

/** A rejection still in force: the condition as recorded, now for this generation. */
export function heldRejectionCondition(
  conditions: readonly StoredCondition[] | undefined,
  observed: Observed,
): ConditionInput {
  return {
    type: ConditionType.RequestSent,
    status: 'False',
    reason: RequestSentReason.Rejected,
    message: findCondition(conditions, ConditionType.RequestSent)?.message ?? '',
    observedGeneration: observed.generation,
  };
}

export function failureCondition(error: MailgunError, observed: Observed): ConditionInput {
  const { generation: observedGeneration } = observed;
  switch (error.kind) {
    case 'rejected':
      return {
        type: ConditionType.RequestSent,
        status: 'False',
        reason: RequestSentReason.Rejected,
        message: error.message,
        observedGeneration,
      };
    case 'unauthorized':
      return {
        type: ConditionType.RequestSent,
        status: 'False',
        reason: RequestSentReason.Unauthorized,
        message: 'Mailgun answered 401 Unauthorized: check the API key and domain',
        observedGeneration,
      };
    case 'misconfigured':
      return {
        type: ConditionType.RequestSent,
        status: 'False',
        reason: RequestSentReason.Misconfigured,
        message: `${error.message}: ${MISCONFIGURED_HINT}; the mail itself was not refused`,
        observedGeneration,
      };
    case 'retryable':
      return error.maybeSent
        ? {
            type: ConditionType.RequestSent,
            status: 'Unknown',
            reason: RequestSentReason.ConfirmingDelivery,
            message: `${error.message}; the mail may have been accepted, checking Mailgun's events before resending`,
            observedGeneration,
          }
        : {
            type: ConditionType.RequestSent,
            status: 'False',
            reason: RequestSentReason.MailgunUnavailable,
            message: error.message,
            observedGeneration,
          };
  }
}

/**
 * The conditions of an unpaused request whose `RequestSent` is `requestSent`: `Paused=False`, then
 * `Ready`, which is True only once the mail `messageID` was accepted and the request fulfilled, and
 * until a mail is accepted repeats why not.
 */
export function requestConditions(
  requestSent: ConditionInput,
  observed: Observed,
  messageID?: string,
): ConditionInput[] {
  return [
    {
      type: ConditionType.Paused,
      status: 'False',
      reason: PausedReason.NotPaused,
      observedGeneration: observed.generation,
    },
    requestSent,
    readyCondition(requestSent, observed, messageID),
  ];
}

function readyCondition(requestSent: ConditionInput, observed: Observed, messageID?: string): ConditionInput {
  const { generation: observedGeneration } = observed;
  if (messageID && observed.fulfilled)
    return { type: ConditionType.Ready, status: 'True', reason: ReadyReason.Provisioned, observedGeneration };
  if (messageID)
    return {
      type: ConditionType.Ready,
      status: 'False',
      reason: ReadyReason.WaitingForFulfilment,
      message: `request mail ${messageID} accepted; waiting for the requested infrastructure to be filled into the spec`,
      observedGeneration,
    };
  return {
    type: ConditionType.Ready,
    status: 'False',
    reason: requestSent.reason,
    message: requestSent.message,
    observedGeneration,
  };
}

/**
 * The status patch reporting `change` on top of `current`, or undefined when writing it would leave
 * `current` as it is (no fields, the same conditions, the same contract fields): a reconcile that
 * learned nothing new makes no request. A change with fields always has a patch.
 */
export function statusPatch(
  current: RequestStatus | undefined,
  change: StatusChange & { fields: StatusFields },
  observed: Observed,
  now: Date,
): StatusPatch;
export function statusPatch(
  current: RequestStatus | undefined,
  change: StatusChange,
  observed: Observed,
  now: Date,
): StatusPatch | undefined;
export function statusPatch(
  current: RequestStatus | undefined,
  change: StatusChange,
  observed: Observed,
  now: Date,
): StatusPatch | undefined {
  const before = asConditions(current?.conditions);
  let conditions = before ?? [];
  // setCondition returns its input when nothing changed: identity with `before` says whether any did.
  for (const condition of change.conditions) conditions = setCondition(conditions, condition, now);
  const fields = change.fields ?? {};
  const conditionsChanged = conditions !== before;
  const hasFields = Object.keys(fields).length > 0;
  if (change.paused) return conditionsChanged || hasFields ? { ...fields, conditions } : undefined;

  const provisioned = Boolean(fields.messageID ?? current?.messageID) && observed.fulfilled;
  const contractUnchanged =
    current?.initialization?.provisioned === provisioned &&
    current.observedGeneration === observed.generation;
  if (!conditionsChanged && !hasFields && contractUnchanged) return undefined;
  return {
    ...fields,
    conditions,
    observedGeneration: observed.generation,
    initialization: { provisioned },
  };
}

/** Stored conditions as metav1.Conditions: the CRDs leave `message` optional; a missing one reads as ''. */
function asConditions(stored: readonly StoredCondition[] | undefined): readonly Condition[] | undefined {
  return stored?.map((condition) => ({ ...condition, message: condition.message ?? '' }));
}
