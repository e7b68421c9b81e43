/**
 * The hand-off decision a replica makes on every tick: which buckets to give up, keep and take, from
 * what it holds and what the ring's member Leases say. Pure: the caller reads the Leases, judges their
 * expiry, drains and writes.
 *
 * Safety comes from two rules together: a replica takes a bucket only when no other live member lists
 * it, and lists a bucket in its Lease before reconciling it. Replicas that see the same live members
 * compute disjoint targets (see `assign`), so even plans made from one snapshot at the same moment never
 * take one bucket twice. Replicas whose views differ (one has seen a Lease expire or a member join and
 * another not yet) can both take a bucket that neither sees held; both keep it until their views agree,
 * then the one whose target lacks it releases it. The caller's side of the contract, as in leader
 * election: a replica that cannot renew its member Lease in time stops reconciling everything it holds
 * before the Lease can expire, and (re)acquires its Lease holding nothing.
 */
import { assign } from './assignment.ts';
import { normalizeBuckets } from './space.ts';

/** One member Lease of the ring as this replica last saw it. */
export interface MemberView {
  /**
   * The Lease's holder identity. Empty when the holder released the Lease on a graceful exit: such a
   * Lease is not a member at all, neither in the assignment nor as a holder of buckets.
   */
  readonly identity: string;
  /**
   * Judged by the caller as leader election judges a Lease: no change to the record seen, in local time,
   * for its lease duration. An expired member is left out of the assignment and blocks nothing.
   */
  readonly expired: boolean;
  /**
   * The buckets its holdings annotation lists; `undefined` when the annotation could not be parsed.
   * Such a member, unless expired, might hold any bucket, so it blocks every one.
   */
  readonly holdings: readonly number[] | undefined;
}

export interface HandoffInput {
  /** This replica's identity, the holder identity of its member Lease. */
  readonly me: string;
  /**
   * What this replica holds now. Its own entry in `members` is ignored: its Lease is written from
   * this, and may lag behind it.
   */
  readonly held: readonly number[];
  /** Every member Lease in the ring, this replica's own included or not. */
  readonly members: readonly MemberView[];
}

/** A bucket this replica should hold but cannot take yet, and the live members that block it. */
export interface Waiting {
  readonly bucket: number;
  /** Sorted: the members that list the bucket, and those whose holdings could not be read. */
  readonly holders: readonly string[];
}

/**
 * What to do this tick, every list sorted. The caller stops and drains `release`, then writes `keep`
 * and `take` as its holdings, and only then starts reconciling `take`: another replica may take a
 * released bucket as soon as the write is visible, and must see a taken one as held before this
 * replica acts on it.
 */
export interface HandoffPlan {
  readonly take: number[];
  readonly release: number[];
  readonly keep: number[];
  readonly waitingFor: Waiting[];
}

/** @throws RangeError when `me` is empty or `held` lists what is not a bucket. */
export function planHandoff({ me, held, members }: HandoffInput): HandoffPlan {
  if (me === '') throw new RangeError('a member needs a non-empty identity');
  const others = members.filter(({ identity, expired }) => identity !== '' && identity !== me && !expired);
  const target = new Set(assign([me, ...others.map(({ identity }) => identity)]).get(me));
  const mine = normalizeBuckets(held);
  const mineSet = new Set(mine);

  const unreadable = others.filter(({ holdings }) => holdings === undefined).map(({ identity }) => identity);
  const holdersOf = new Map<number, Set<string>>();
  for (const { identity, holdings } of others) {
    for (const bucket of holdings ?? []) {
      holdersOf.set(bucket, (holdersOf.get(bucket) ?? new Set()).add(identity));
    }
  }

  const take: number[] = [];
  const waitingFor: Waiting[] = [];
  for (const bucket of [...target].sort((a, b) => a - b)) {
    if (mineSet.has(bucket)) continue;
    const holders = new Set([...(holdersOf.get(bucket) ?? []), ...unreadable]);
    if (holders.size === 0) take.push(bucket);
    else waitingFor.push({ bucket, holders: [...holders].sort() });
  }
  return {
    take,
    release: mine.filter((bucket) => !target.has(bucket)),
    keep: mine.filter((bucket) => target.has(bucket)),
    waitingFor,
  };
}
