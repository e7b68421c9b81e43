/**
 * The decision of one reconcile, as a pure function of what the object records, its Cluster and the
 * time: no server needed to test it. See the README's "Exactly once" section for why each step is safe.
 */
import { findCondition } from '@loopwright/runtime';
import { ConditionType, RequestSentReason } from './reasons.ts';
import {
  MESSAGE_ID_ANNOTATION,
  PAUSED_ANNOTATION,
  type CapiObject,
  type RequestObject,
  type SendAttempt,
} from './resource.ts';

export type Step =
  /** Cluster API paused the object: report it, touch nothing else. */
  | { action: 'pause' }
  /** The mail was accepted: make status and annotation agree on `messageID`; never send again. */
  | { action: 'record'; messageID: string }
  /** Mailgun refused this generation's input: wait for a spec change. */
  | { action: 'holdRejected' }
  /**
   * An attempt without a recorded id: it may be in flight elsewhere, or was sent before a crash. Look
   * for its mail in Mailgun's events since `since`. Not found: `resend` once the attempt is older than
   * the settle window (the absence is conclusive), else `wait` and look again after `retryAfterMs`.
   */
  | { action: 'lookup'; attempt: SendAttempt; since: Date; ifNotFound: 'resend' }
  | { action: 'lookup'; attempt: SendAttempt; since: Date; ifNotFound: 'wait'; retryAfterMs: number }
  /** Nothing claimed yet: claim an attempt, then send. */
  | { action: 'claim' };

/** Between two lookups of an unsettled attempt, at most this long: a late event is noticed soon. */
export const MAX_RECHECK_MS = 60_000;
/** How far before the object's creation the events lookup starts: clock skew between the API server and Mailgun. */
export const LOOKUP_SKEW_MS = 10 * 60_000;

/** Cluster API paused `object`: by its Cluster's `spec.paused` or its own paused annotation. */
export function isPaused(object: RequestObject, cluster: CapiObject | undefined): boolean {
  return cluster?.spec?.paused === true || object.metadata?.annotations?.[PAUSED_ANNOTATION] !== undefined;
}

/** The id of `object`'s accepted mail, from its status or its annotation; undefined while none is. */
export function acceptedMessageID(object: RequestObject): string | undefined {
  return object.status?.messageID ?? object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION];
}

/**
 * @param cluster the Cluster whose `spec.paused` pauses `object` (for a MailgunCluster its owner).
 * @param settleMs how old an attempt must be before a missing `accepted` event means it was never sent.
 */
export function decide(
  object: RequestObject,
  cluster: CapiObject | undefined,
  now: Date,
  settleMs: number,
): Step {
  if (isPaused(object, cluster)) return { action: 'pause' };

  const { status } = object;
  const recorded = acceptedMessageID(object);
  if (recorded) return { action: 'record', messageID: recorded };

  const attempt = status?.sendAttempt;
  if (attempt) {
    const created = object.metadata?.creationTimestamp ?? attempt.startedAt;
    const since = new Date(new Date(created).getTime() - LOOKUP_SKEW_MS);
    const started = Date.parse(attempt.startedAt);
    // An unreadable time never counts as settled: waiting is safe, resending is not.
    const ageMs = Number.isNaN(started) ? 0 : now.getTime() - started;
    const remainingMs = settleMs - ageMs;
    if (remainingMs <= 0) return { action: 'lookup', attempt, since, ifNotFound: 'resend' };
    return {
      action: 'lookup',
      attempt,
      since,
      ifNotFound: 'wait',
      retryAfterMs: Math.min(remainingMs, MAX_RECHECK_MS),
    };
  }

  const requestSent = findCondition(status?.conditions, ConditionType.RequestSent);
  if (
    requestSent?.reason === RequestSentReason.Rejected &&
    requestSent.observedGeneration === object.metadata?.generation
  )
    return { action: 'holdRejected' };
  return { action: 'claim' };
}
