import type { EpochMicros } from './micro-time.ts';

/**
 * What a lock stores, as client-go's `LeaderElectionRecord` (a Lease's spec). An empty
 * `holderIdentity` means nobody holds the lock (it was released).
 */
export interface LeaderElectionRecord {
  holderIdentity: string;
  /** How long others must see this record unchanged before they may take the lock. */
  leaseDurationSeconds: number;
  /** When the current holder acquired the lock; `undefined` if the field is absent. */
  acquireTime: EpochMicros | undefined;
  /** When the holder last wrote the record; informational only (never used to judge expiry). */
  renewTime: EpochMicros | undefined;
  /** How many times the holder changed. */
  leaseTransitions: number;
}

/**
 * The storage of one leader election record with optimistic concurrency, like client-go's
 * `resourcelock.Interface`. The elector depends only on this, so its algorithm is tested against an
 * in-memory double; {@link LeaseLock} is the implementation on a `coordination.k8s.io/v1` Lease.
 *
 * Concurrency contract: `update` writes on top of the version returned by this lock's last successful
 * `get`, `create` or `update`, and must fail (e.g. 409 Conflict) if anyone else wrote since. Every
 * method rejects on failure (and when `signal` aborts); the elector logs the failure and retries.
 */
export interface ResourceLock {
  /** This candidate's identity, written as `holderIdentity`; unique per process (e.g. pod name + UID). */
  identity(): string;
  /** Human-readable location for logs, e.g. `kube-system/my-controller`. */
  describe(): string;
  /** The current record, or `undefined` if the lock object does not exist. */
  get(signal: AbortSignal): Promise<LeaderElectionRecord | undefined>;
  /** Creates the lock object with `record`; fails if it already exists. */
  create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
  /** Replaces the record, conditional on the version last seen by this lock. */
  update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
}

/**
 * A stable serialisation of a record's content. The elector compares these to notice that the
 * record changed (client-go compares the marshalled record's bytes); metadata-only writes, such as
 * someone adding a label to the Lease, do not count as a change.
 */
export function recordContent(record: LeaderElectionRecord): string {
  return JSON.stringify([
    record.holderIdentity,
    record.leaseDurationSeconds,
    record.acquireTime ?? null,
    record.renewTime ?? null,
    record.leaseTransitions,
  ]);
}
