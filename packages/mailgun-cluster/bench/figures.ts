/**
 * Mails a second, from the Mailgun side: when each replica's sends were answered accepted (its slow
 * front's record). A rate over a window is the mails answered in (start, end] over its length, so a
 * window from one mail to another counts the intervals between them.
 */
import type { AnsweredSend } from './slow-mailgun.ts';

export interface ReplicaMails {
  identity: string;
  /** Epoch ms of each accepted send, ascending. */
  accepted: number[];
  /** Sends answered with anything but 200. */
  failed: number;
}

export interface Window {
  startMs: number;
  endMs: number;
  mails: number;
  perSecond: number;
}

export function replicaMails(identity: string, sends: readonly AnsweredSend[]): ReplicaMails {
  const ok = sends.filter((send) => send.status === 200).map((send) => send.answeredMs);
  return { identity, accepted: ok.sort((a, b) => a - b), failed: sends.length - ok.length };
}

function windowOf(all: readonly number[], startMs: number, endMs: number): Window {
  const mails = all.filter((ms) => ms > startMs && ms <= endMs).length;
  return { startMs, endMs, mails, perSecond: endMs > startMs ? (mails * 1000) / (endMs - startMs) : 0 };
}

/** From the first mail to the last, whoever sent them: start-up skew and the tail included. */
export function wholeRun(replicas: readonly ReplicaMails[]): Window | undefined {
  const all = replicas.flatMap((r) => r.accepted).sort((a, b) => a - b);
  const first = all[0];
  const last = all.at(-1);
  return first === undefined || last === undefined ? undefined : windowOf(all, first, last);
}

/**
 * While every replica was sending: from the latest of their first mails to the earliest of their last.
 * Each replica has one worker and a queue longer than the window (its whole share was there before it
 * started), so inside it each sends as fast as it can; outside it some replica is still starting or
 * taking its buckets, or has run out of work (its share was smaller than another's).
 */
export function steadyState(replicas: readonly ReplicaMails[]): Window | undefined {
  const firsts = replicas.map((r) => r.accepted[0]);
  const lasts = replicas.map((r) => r.accepted.at(-1));
  if (firsts.some((ms) => ms === undefined) || lasts.some((ms) => ms === undefined)) return undefined;
  const startMs = Math.max(...(firsts as number[]));
  const endMs = Math.min(...(lasts as number[]));
  if (endMs <= startMs) return undefined;
  return windowOf(
    replicas.flatMap((r) => r.accepted),
    startMs,
    endMs,
  );
}

export function formatWindow(window: Window | undefined, originMs: number): string {
  if (window === undefined) return 'n/a';
  const at = (ms: number): string => `${((ms - originMs) / 1000).toFixed(1)} s`;
  return `${window.perSecond.toFixed(2)} mails/s (${window.mails} mails from ${at(window.startMs)} to ${at(window.endMs)} after the replicas started)`;
}
