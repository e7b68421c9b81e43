/**
 * The 64-bit hash space [0, 2^64) cut into {@link BUCKETS} equal buckets: the unit that members are
 * assigned, hand off and list in their Leases, and that list/watch requests select with `shardSelector`.
 */

/**
 * Many more buckets than a controller runs replicas, so that shares differ by at most one bucket (0.4 %
 * of the space); few enough that a Lease annotation lists any set in under a kilobyte.
 */
export const BUCKETS = 256;
/** 64 - log2(BUCKETS): a bucket is the top 8 bits of a hash. */
const BUCKET_SHIFT = 56n;
const SPACE_END = 1n << 64n;

/** The fields kube-apiserver can shard by (apiserver pkg/sharding/parser.go accepts only these two). */
export type ShardField = 'object.metadata.uid' | 'object.metadata.namespace';

/** Hashes from `start` (inclusive) to `end` (exclusive); `end` is at most 2^64. */
export interface HashRange {
  readonly start: bigint;
  readonly end: bigint;
}

/** @throws RangeError unless `hash` is an unsigned 64-bit value, as `fnv1a64` returns. */
export function bucketOf(hash: bigint): number {
  if (hash < 0n || hash >= SPACE_END) throw new RangeError(`hash ${hash} is outside the 64-bit space`);
  return Number(hash >> BUCKET_SHIFT);
}

/** @throws RangeError unless `bucket` is an integer from 0 to BUCKETS - 1. */
function checkBucket(bucket: number): void {
  if (!Number.isInteger(bucket) || bucket < 0 || bucket >= BUCKETS) {
    throw new RangeError(`${String(bucket)} is not a bucket (an integer from 0 to ${BUCKETS - 1})`);
  }
}

/** The hashes in `bucket`. @throws RangeError for what is not a bucket. */
export function bucketRange(bucket: number): HashRange {
  checkBucket(bucket);
  return { start: BigInt(bucket) << BUCKET_SHIFT, end: BigInt(bucket + 1) << BUCKET_SHIFT };
}

/**
 * The buckets sorted, each once: callers hand in sets built in any order, and every bucket list this
 * folder returns or writes is in this form. @throws RangeError for what is not a bucket.
 */
export function normalizeBuckets(buckets: Iterable<number>): number[] {
  const unique = [...new Set(buckets)];
  for (const bucket of unique) checkBucket(bucket);
  return unique.sort((a, b) => a - b);
}

/** The buckets as the fewest runs of consecutive buckets, sorted: `[first, last]`, both inclusive. */
export function bucketRuns(buckets: Iterable<number>): [number, number][] {
  const runs: [number, number][] = [];
  for (const bucket of normalizeBuckets(buckets)) {
    const last = runs.at(-1);
    if (last !== undefined && last[1] === bucket - 1) last[1] = bucket;
    else runs.push([bucket, bucket]);
  }
  return runs;
}

/** The hashes in `buckets` as the fewest contiguous ranges, sorted. */
export function mergeRanges(buckets: Iterable<number>): HashRange[] {
  return bucketRuns(buckets).map(([first, last]) => ({
    start: bucketRange(first).start,
    end: bucketRange(last).end,
  }));
}

/**
 * A bound as the server's parser demands it: `0x` and exactly 16 lowercase hex digits. The exclusive end
 * of the whole space, 2^64, comes out as `0x10000000000000000`, the one 17-digit bound it accepts.
 */
function hexBound(value: bigint): string {
  return `0x${value.toString(16).padStart(16, '0')}`;
}

/**
 * The `shardSelector` of a list/watch that returns exactly the objects whose `field` hashes into
 * `buckets`: one `shardRange(field, 'start', 'end')` per contiguous range, joined with ` || ` (a single
 * term for all buckets). `undefined` for no buckets: the API has no selector that matches nothing (an
 * empty one means everything), so a caller holding nothing must not list or watch at all.
 *
 * A scattered set costs one term per run: at most 128 (every other bucket), about 11 KB before URL
 * encoding, far below the 100,000 characters the server's CEL parser accepts (cel-go's default); the
 * server then tests each object against the terms in turn. `assign` scatters a member's share: about
 * (256/n)(1 - 1/n) runs, measured 60 terms on average at n = 2 (69 at most), 23 at n = 10.
 */
export function shardSelector(field: ShardField, buckets: Iterable<number>): string | undefined {
  const ranges = mergeRanges(buckets);
  if (ranges.length === 0) return undefined;
  return ranges
    .map(({ start, end }) => `shardRange(${field}, '${hexBound(start)}', '${hexBound(end)}')`)
    .join(' || ');
}

/** The share of the hash space that `buckets` cover, from 0 to 1 (duplicates counted once). */
export function fraction(buckets: Iterable<number>): number {
  return normalizeBuckets(buckets).length / BUCKETS;
}
