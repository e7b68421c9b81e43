/**
 * What a {@link Sharder} is given, and the checks that refuse a configuration that would be unsafe: its
 * timing rules are leader election's, for the same reason (a member must have stopped before the others
 * may judge it gone), so they are validated alike.
 */
import type { KubeClient } from '@loopwright/client';
import type { Clock } from '@loopwright/core';
import { leaseDurationsProblem, type Logger } from '@loopwright/leader-election';
import { labelValue } from '../config/kinds.ts';
import type { ShardHandoffResult } from '@loopwright/metrics';

/** What the sharder tells the replica that reconciles. */
export interface SharderCallbacks {
  /**
   * The replica may reconcile these buckets from now on (sorted, none it holds already). It may take
   * time (server-side sharding lists the new shard before its keys are queued): the claim is done, and
   * counted taken, once it resolves; meanwhile the buckets are listed in the member Lease, which is
   * renewed every retry period. If the Lease is lost or the sharder halted while it is pending, `signal`
   * aborts: a start that completes after that must not begin reconciling. A rejection is logged; the
   * buckets stay held (listed, and drained when released) as after a start that succeeded.
   */
  start(buckets: readonly number[], signal: AbortSignal): void | Promise<void>;
  /**
   * Stop reconciling these buckets; resolve once none of their reconciles is in flight. Only then are
   * they removed from the member Lease, so another replica may take them. A rejection is logged and
   * the drain is tried again on a later tick; the buckets stay listed meanwhile.
   */
  drain(buckets: readonly number[]): Promise<void>;
  /**
   * Called once when the member Lease could not be renewed within the renew deadline (or was deleted or
   * taken by someone else): stop reconciling every bucket at once, without waiting for anything. The
   * others take them over once they judge the Lease expired; the caller is expected to exit, as
   * controller-runtime does when it loses leadership.
   */
  lost(): void;
}

/**
 * How a tick's hand-off ended, for {@link ShardingMetricsSink.observeHandoff}: `taken`, `released`,
 * `conflict` (claimed buckets another live member also listed: dropped, never started) or `failed`
 * (retried on a later tick). One list with the metric's label values.
 */
export type HandoffResult = ShardHandoffResult;

/** Structural hook for the sharding metrics; `@loopwright/metrics`' `ShardingMetrics` fits. Must not throw. */
export interface ShardingMetricsSink {
  /** The live members of the ring as last read, this replica included. */
  setMembers(ring: string, members: number): void;
  /** The share of the hash space this replica reconciles, from 0 to 1. */
  setOwnedFraction(ring: string, fraction: number): void;
  /** One hand-off of `buckets` buckets, from its first request or drain to its end. */
  observeHandoff(ring: string, result: HandoffResult, buckets: number, durationSeconds: number): void;
}

/** Options of {@link Sharder}. Durations in milliseconds, defaults as leader election's. */
export interface SharderOptions {
  /** The API server connection; a client of its own, so that renewals never queue behind reconciles. */
  client: KubeClient;
  /** Where the ring's member Leases live: the controller's namespace. */
  namespace: string;
  /** The ring's name, a label value: every replica of one controller uses the same. */
  ring: string;
  /** This replica's identity, unique per process (the Manager's: hostname and a UUID). */
  identity: string;
  /**
   * How long the others wait, after they last saw this member's Lease change, before they judge it
   * gone; written as `leaseDurationSeconds`, so a whole number of seconds. Default 15 000.
   */
  leaseDurationMs?: number;
  /** Past this long since the last successful write, the member gives everything up. Default 10 000. */
  renewDeadlineMs?: number;
  /**
   * Time between ticks (renew, read, hand off), jittered up to a fifth more; a member's expiry runs a
   * tick of its own, at once. Default 2 000.
   */
  retryPeriodMs?: number;
  callbacks: SharderCallbacks;
  metrics?: ShardingMetricsSink;
  /** The leader-election `Logger` shape (a winston child logger fits). Default: its `consoleLogger`. */
  logger?: Logger;
  /** For tests: time source. Default the real clock. */
  clock?: Clock;
  /** For tests: randomness in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number;
  /**
   * Aborting it stops the sharder dead, as a crash would: no drain, no write, no delete; `run` resolves
   * `'halted'`. For tests, and for the Manager when reconciles outlive its graceful shutdown timeout: a
   * drain would wait for them forever, and the Lease must then expire rather than be deleted.
   */
  halt?: AbortSignal;
}

/** Invalid {@link SharderOptions}; thrown by the constructor. */
export class ShardingConfigError extends Error {
  override readonly name = 'ShardingConfigError';
}

export interface Durations {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** The options' durations with defaults. @throws ShardingConfigError for anything unsafe or malformed. */
export function validateSharderOptions(options: SharderOptions): Durations {
  if (options.namespace === '') throw new ShardingConfigError('namespace must not be empty');
  // The ring is the value of the label `sharding.loopwright.dev/ring`.
  if (labelValue.parse(options.ring) === undefined) {
    throw new ShardingConfigError(
      `ring ${JSON.stringify(options.ring)} must be a label value: 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`,
    );
  }
  if (options.identity === '') throw new ShardingConfigError('identity must not be empty');
  // The type system covers TypeScript callers; these catch JavaScript callers and `as any`.
  const callbacks = options.callbacks as Partial<SharderCallbacks> | undefined;
  for (const name of ['start', 'drain', 'lost'] as const) {
    if (typeof callbacks?.[name] !== 'function') {
      throw new ShardingConfigError(`callbacks.${name} must be a function`);
    }
  }
  const durations = {
    leaseDurationMs: options.leaseDurationMs ?? 15_000,
    renewDeadlineMs: options.renewDeadlineMs ?? 10_000,
    retryPeriodMs: options.retryPeriodMs ?? 2_000,
  };
  const problem = leaseDurationsProblem(durations);
  if (problem !== undefined) throw new ShardingConfigError(problem);
  return durations;
}
