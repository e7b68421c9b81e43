import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** How one hand-off of buckets between the replicas of a ring ended. */
export const SHARD_HANDOFF_RESULTS = [
  /** Buckets claimed, confirmed free by a second read, and started. */
  'taken',
  /** Buckets drained (no reconcile of theirs in flight) and removed from the member Lease. */
  'released',
  /** Claimed buckets that another live member listed too: dropped, never started. */
  'conflict',
  /** A drain rejected, or a write or read failed: retried on a later tick. */
  'failed',
] as const;
export type ShardHandoffResult = (typeof SHARD_HANDOFF_RESULTS)[number];

export interface ShardingMetrics {
  /** `loopwright_shard_members{controller}`: the ring's live members as last read, this one included. */
  setMembers(controller: string, members: number): void;
  /** `loopwright_shard_owned_fraction{controller}`: this replica's share of the hash space, 0 to 1. */
  setOwnedFraction(controller: string, fraction: number): void;
  /**
   * Counts one hand-off in `loopwright_shard_handoffs_total{controller,result}` and, when it moved
   * buckets (`taken`, `released`), observes its duration in `loopwright_shard_handoff_duration_seconds`.
   */
  observeHandoff(
    controller: string,
    result: ShardHandoffResult,
    buckets: number,
    durationSeconds: number,
  ): void;
}

/**
 * Active-active sharding: how many replicas share the work, what share this one holds (the shares of
 * all replicas sum to 1 once the ring has settled; less while a range waits for its previous holder),
 * and the hand-offs. Every result is exported at 0 per controller from the first report, so `rate()`
 * and alerts work before the first conflict.
 */
export function createShardingMetrics(registry: Registry): ShardingMetrics {
  const members = new Gauge({
    name: 'loopwright_shard_members',
    help: "Live members of this controller's shard ring, as this replica last read it.",
    labelNames: ['controller'] as const,
    registers: [registry],
  });
  const owned = new Gauge({
    name: 'loopwright_shard_owned_fraction',
    help: 'Share of the hash space (0 to 1) whose objects this replica reconciles.',
    labelNames: ['controller'] as const,
    registers: [registry],
  });
  const handoffs = new Counter({
    name: 'loopwright_shard_handoffs_total',
    help: 'Hand-offs of hash ranges between replicas, by result: taken, released, conflict (a claim another replica also made, dropped), failed (retried).',
    labelNames: ['controller', 'result'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'loopwright_shard_handoff_duration_seconds',
    help: 'How long a hand-off that moved ranges took: a release from the start of its drain, a take from its claim to its confirmation.',
    labelNames: ['controller'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const known = new Set<string>();
  const initialise = (controller: string): void => {
    if (known.has(controller)) return;
    known.add(controller);
    for (const result of SHARD_HANDOFF_RESULTS) handoffs.inc({ controller, result }, 0);
  };
  return {
    setMembers(controller, count) {
      initialise(controller);
      members.set({ controller }, count);
    },
    setOwnedFraction(controller, fraction) {
      initialise(controller);
      owned.set({ controller }, fraction);
    },
    observeHandoff(controller, result, buckets, durationSeconds) {
      initialise(controller);
      handoffs.inc({ controller, result });
      if (buckets > 0 && (result === 'taken' || result === 'released')) {
        duration.observe({ controller }, durationSeconds);
      }
    },
  };
}
