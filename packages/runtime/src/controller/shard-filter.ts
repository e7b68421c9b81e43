import type { KubeObject } from '@loopwright/informer';
import { fnv1a64 } from '../sharding/hash.ts';
import { bucketOf } from '../sharding/space.ts';
import { splitKey } from './mappers.ts';

/** What a sharded controller hashes to find a key's bucket (the API server's two shard fields). */
export type ShardBy = 'uid' | 'namespace';

/** The bucket of a hashed value: the same hash and cut as the API server's `shardSelector`. */
export function bucketOfValue(value: string): number {
  return bucketOf(fnv1a64(value));
}

/**
 * One sharded controller's view of its buckets (issue 39, in-replica filtering): which buckets it
 * holds, the bucket of each key it queued, and the keys being reconciled, so that a drain can wait for
 * them. Pure bookkeeping; the Controller calls it at enqueue, at dequeue and when a reconcile ends.
 *
 * A key's bucket is the hash of its primary object's uid (or of the key's namespace, `shardBy:
 * 'namespace'`; a cluster-scoped key hashes `''`, as the server hashes a cluster-scoped object's empty
 * namespace). An event that carries the uid (the primary's own, an owned object's controller owner
 * reference) gives it; otherwise `lookupUid` asks the primary cache. The bucket found at enqueue is kept
 * until the key is done and not queued again, so a key whose object was deleted meanwhile is still
 * reconciled (or dropped) by the replica that holds its bucket.
 */
export class ShardFilter {
  readonly #shardBy: ShardBy;
  readonly #lookupUid: (key: string) => string | undefined;
  readonly #held = new Set<number>();
  /** The bucket of every key queued, waiting for a requeue, or in flight. */
  readonly #buckets = new Map<string, number>();
  /** Keys being reconciled, with their buckets; `true` once admitted again during the reconcile. */
  readonly #inFlight = new Map<string, { bucket: number; readmitted: boolean }>();
  readonly #drains = new Set<{ buckets: ReadonlySet<number>; resolve: () => void }>();

  constructor(shardBy: ShardBy, lookupUid: (key: string) => string | undefined) {
    this.#shardBy = shardBy;
    this.#lookupUid = lookupUid;
  }

  /**
   * Whether `key` may be queued: its bucket is held. `uid` is its primary object's uid when the event
   * carried it. A key whose bucket cannot be found (no uid and nothing cached) is not this replica's.
   */
  admit(key: string, uid: string | undefined): boolean {
    const bucket = this.#bucketOf(key, uid);
    if (bucket === undefined || !this.#held.has(bucket)) return false;
    this.#buckets.set(key, bucket);
    const flight = this.#inFlight.get(key);
    if (flight !== undefined) flight.readmitted = true;
    return true;
  }

  /**
   * Called when a worker takes `key`: true, and the key counts as in flight, when its bucket is still
   * held; false when it is not (drained since it was queued): the worker drops it.
   */
  begin(key: string): boolean {
    const bucket = this.#buckets.get(key) ?? this.#bucketOf(key, undefined);
    if (bucket === undefined || !this.#held.has(bucket)) {
      this.#buckets.delete(key);
      return false;
    }
    this.#buckets.set(key, bucket);
    this.#inFlight.set(key, { bucket, readmitted: false });
    return true;
  }

  /** A reconcile of `key` ended; `requeued`: its result queued the key again (retry, requeueAfter). */
  end(key: string, requeued: boolean): void {
    const flight = this.#inFlight.get(key);
    this.#inFlight.delete(key);
    if (!requeued && flight?.readmitted !== true) this.#buckets.delete(key);
    for (const drain of this.#drains) {
      if (!this.#busy(drain.buckets)) {
        this.#drains.delete(drain);
        drain.resolve();
      }
    }
  }

  /** Takes `buckets`: keys in them are admitted from now on. */
  hold(buckets: Iterable<number>): void {
    for (const bucket of buckets) this.#held.add(bucket);
  }

  /** Whether `obj`, a primary object, is in one of `buckets`. */
  objectIn(obj: KubeObject, buckets: ReadonlySet<number>): boolean {
    const value = this.#shardBy === 'uid' ? obj.metadata?.uid : (obj.metadata?.namespace ?? '');
    return value !== undefined && buckets.has(bucketOfValue(value));
  }

  /**
   * Gives `buckets` up at once (nothing of theirs is admitted or begun from now on); resolves when no
   * reconcile of a key in them is in flight.
   */
  release(buckets: Iterable<number>): Promise<void> {
    const released = new Set(buckets);
    for (const bucket of released) this.#held.delete(bucket);
    if (!this.#busy(released)) return Promise.resolve();
    return new Promise((resolve) => this.#drains.add({ buckets: released, resolve }));
  }

  /**
   * Forgets every key of `buckets`, given up and drained (see `release`), and returns them: whatever
   * still waits for them (queued, or a requeue's delay) is for the queue to drop as well. Without this a
   * replica would keep each key it ever queued for buckets long handed off (their requeues can be a year
   * away), and reconcile nothing of them.
   */
  forget(buckets: ReadonlySet<number>): Set<string> {
    const forgotten = new Set<string>();
    for (const [key, bucket] of this.#buckets) {
      if (!buckets.has(bucket) || this.#inFlight.has(key)) continue;
      this.#buckets.delete(key);
      forgotten.add(key);
    }
    return forgotten;
  }

  /** Keys with a known bucket: queued, waiting for a requeue or in flight (for tests and bounds). */
  get tracked(): number {
    return this.#buckets.size;
  }

  #busy(buckets: ReadonlySet<number>): boolean {
    for (const { bucket } of this.#inFlight.values()) if (buckets.has(bucket)) return true;
    return false;
  }

  #bucketOf(key: string, uid: string | undefined): number | undefined {
    if (this.#shardBy === 'namespace') return bucketOfValue(splitKey(key).namespace ?? '');
    if (uid !== undefined) return bucketOfValue(uid);
    const known = this.#buckets.get(key);
    if (known !== undefined) return known;
    const cached = this.#lookupUid(key);
    return cached === undefined ? undefined : bucketOfValue(cached);
  }
}
