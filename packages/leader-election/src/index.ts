/**
 * @loopwright/leader-election: client-go `tools/leaderelection` with a Lease lock, interoperable with
 * Go candidates sharing the same Lease. See the README for exact semantics.
 */
export { LeaderElector, JITTER_FACTOR, leaseDurationsProblem } from './elector.ts';
export type { LeaderCallbacks, LeaderElectionMetricsSink, LeaderElectorOptions } from './elector.ts';
export { decodeLeaseSpec, encodeLeaseSpec, LEASES, LeaseLock } from './lease-lock.ts';
export type { LeaseLockOptions, LeaseSpec } from './lease-lock.ts';
export type { LeaderElectionRecord, ResourceLock } from './resource-lock.ts';
export { formatMicroTime, parseMicroTime, MicroTimeError } from './micro-time.ts';
export type { EpochMicros } from './micro-time.ts';
export { LeaderElectionConfigError, LeaderWorkError } from './errors.ts';
export { consoleLogger } from './logger.ts';
export type { Logger } from './logger.ts';
