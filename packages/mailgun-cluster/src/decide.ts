/**
 * The send decision, as a pure function of what the object records and the time: no server needed to
 * test it. See the README's "Exactly once" section for why each branch is safe.
 */
import { ConditionType, findCondition, type Condition } from './conditions.ts';

/** Keeps a copy of the message id where a backup/restore keeps it (restores usually drop status). */
export const MESSAGE_ID_ANNOTATION = 'mailgun.loopwright.dev/message-id';

export interface SendAttempt {
  id: string;
  startedAt: string;
}

export interface RequestState {
  generation: number | undefined;
  annotations: Record<string, string> | undefined;
  status:
    | {
        messageID?: string;
        sendAttempt?: SendAttempt;
        conditions?: Condition[];
      }
    | undefined;
}

export type Decision =
  /** The mail was accepted: make status and annotation agree on `messageID`; never send again. */
  | { action: 'record'; messageID: string }
  /** Mailgun refused this generation's input: wait for a spec change. */
  | { action: 'rejected' }
  /** Nothing claimed yet, or a claimed attempt provably lost: claim a new attempt, then send. */
  | { action: 'claim'; replaces: SendAttempt | undefined }
  /**
   * An attempt without a recorded id: it may be in flight elsewhere, or was sent before a crash. Look
   * for its mail through the events API; if absent, `settled` says whether the absence is conclusive.
   */
  | { action: 'lookup'; attempt: SendAttempt; settled: boolean; recheckAfterMs: number };

/** Between two lookups of an unsettled attempt, at most this long: a late event is noticed soon. */
export const MAX_RECHECK_MS = 60_000;

export function decide(state: RequestState, now: Date, settleMs: number): Decision {
  const recorded = state.status?.messageID ?? state.annotations?.[MESSAGE_ID_ANNOTATION];
  if (recorded) return { action: 'record', messageID: recorded };

  const attempt = state.status?.sendAttempt;
  if (attempt) {
    const started = Date.parse(attempt.startedAt);
    // An unreadable time never counts as settled: waiting is safe, resending is not.
    const ageMs = Number.isNaN(started) ? 0 : now.getTime() - started;
    const remainingMs = settleMs - ageMs;
    return {
      action: 'lookup',
      attempt,
      settled: remainingMs <= 0,
      recheckAfterMs: Math.max(1, Math.min(remainingMs, MAX_RECHECK_MS)),
    };
  }

  const requestSent = findCondition(state.status?.conditions, ConditionType.RequestSent);
  if (requestSent?.reason === RequestReason.Rejected && requestSent.observedGeneration === state.generation)
    return { action: 'rejected' };
  return { action: 'claim', replaces: undefined };
}

/** Reasons of the RequestSent condition. */
export const RequestReason = {
  Accepted: 'Accepted',
  Sending: 'Sending',
  ConfirmingDelivery: 'ConfirmingDelivery',
  Rejected: 'Rejected',
  Unauthorized: 'Unauthorized',
  MailgunUnavailable: 'MailgunUnavailable',
} as const;
