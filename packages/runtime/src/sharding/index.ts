/**
 * Sharding a controller's objects among its active replicas (issue 39): the pure decisions. The hash
 * space of `object.metadata.uid` (or `.namespace`) is cut into buckets, assigned among the members of
 * the controller's ring, handed off between them through their member Leases, and selected server-side
 * with a list/watch `shardSelector`.
 */
export { fnv1a64, hashHex } from './hash.ts';
export { BUCKETS, bucketOf, bucketRange, fraction, mergeRanges, shardSelector } from './space.ts';
export type { HashRange, ShardField } from './space.ts';
export { assign } from './assignment.ts';
export { formatHoldings, HOLDINGS_ANNOTATION, HoldingsError, parseHoldings } from './holdings.ts';
export { planHandoff } from './handoff.ts';
export type { HandoffInput, HandoffPlan, MemberView, Waiting } from './handoff.ts';
