/**
 * One start as both contenders report it, and the figures the bench compares. Every time is epoch ms on
 * this machine's clock (the limit program runs on the same machine).
 */
import { percentile } from './stats.ts';

export interface Start {
  /** The At's schedule. */
  dueMs: number;
  /** The claim (the conditional RUNNING status patch) was sent, and answered. */
  claimSentMs: number;
  claimAnsweredMs: number;
  /** The pod create was sent, and answered. */
  createSentMs: number;
  createAnsweredMs: number;
}

export interface Figures {
  /** Ats whose pod was created. */
  started: number;
  /** `started` / (last create answered - window open): the rate at which the window's work was done. */
  startsPerSecond: number;
  /** Create answered - schedule. */
  lateness: Quantiles;
  /** Schedule -> claim sent: the part of the lateness spent before the first write left the client. */
  dueToClaimSent: Quantiles;
  /** Claim sent -> claim answered: the claim's round trip. */
  claim: Quantiles;
  /** Claim answered -> create answered: how long an At is RUNNING without a pod. */
  claimToCreate: Quantiles;
  /** Claim answered -> create sent: the part of that gap spent before the create left the client. */
  claimToCreateSent: Quantiles;
}

export interface Quantiles {
  p50: number;
  p99: number;
}

function quantiles(values: readonly number[]): Quantiles {
  return { p50: percentile(values, 50), p99: percentile(values, 99) };
}

export function figuresOf(starts: readonly Start[], windowOpenMs: number): Figures {
  const lastCreateMs = Math.max(...starts.map((s) => s.createAnsweredMs));
  return {
    started: starts.length,
    startsPerSecond: starts.length === 0 ? 0 : starts.length / ((lastCreateMs - windowOpenMs) / 1000),
    lateness: quantiles(starts.map((s) => s.createAnsweredMs - s.dueMs)),
    dueToClaimSent: quantiles(starts.map((s) => s.claimSentMs - s.dueMs)),
    claim: quantiles(starts.map((s) => s.claimAnsweredMs - s.claimSentMs)),
    claimToCreate: quantiles(starts.map((s) => s.createAnsweredMs - s.claimAnsweredMs)),
    claimToCreateSent: quantiles(starts.map((s) => s.createSentMs - s.claimAnsweredMs)),
  };
}

const ms = (value: number): string => `${value.toFixed(0)} ms`;

export function formatFigures(f: Figures, n: number): string {
  return [
    `${f.started}/${n} started, ${f.startsPerSecond.toFixed(1)} starts/s`,
    `lateness p50 ${ms(f.lateness.p50)} p99 ${ms(f.lateness.p99)}`,
    `due->claim sent p50 ${ms(f.dueToClaimSent.p50)} p99 ${ms(f.dueToClaimSent.p99)}`,
    `claim p50 ${ms(f.claim.p50)} p99 ${ms(f.claim.p99)}`,
    `claim->create p50 ${ms(f.claimToCreate.p50)} p99 ${ms(f.claimToCreate.p99)} ` +
      `(before the create was sent: p50 ${ms(f.claimToCreateSent.p50)} p99 ${ms(f.claimToCreateSent.p99)})`,
  ].join(', ');
}
