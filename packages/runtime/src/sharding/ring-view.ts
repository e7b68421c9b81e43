/**
 * The ring as this replica has seen it: each member Lease with the local time at which its current
 * content was first seen. Expiry is judged as leader election judges a Lease: no change seen for the
 * Lease's own `leaseDurationSeconds` of OUR monotonic clock since we saw the last change; the
 * `renewTime` another node wrote is never compared with our clock, so clock skew between nodes cannot
 * make a live member look dead. Changes come from the consistent lists of the ring and, sooner, from
 * its watch; only the lists say what a member holds.
 */
import type { Clock } from '@loopwright/core';
import type { MemberView } from './handoff.ts';
import { parseHoldings } from './holdings.ts';
import { memberContent, type MemberLease } from './member-lease.ts';

interface Seen {
  /** As the last consistent list returned it: what planning and the conflict check read. */
  readonly lease: MemberLease;
  /** The last content seen, by a list or by the watch. */
  readonly content: string;
  /** `clock.now()` when this content was first seen. */
  readonly since: number;
}

export class RingView {
  readonly #clock: Clock;
  #seen = new Map<string, Seen>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Takes a read of the whole ring, now. A Lease whose content differs from the last seen counts as
   * changed from now on; one missing from the read is gone (deleted), and forgotten.
   */
  observe(leases: readonly MemberLease[]): void {
    const now = this.#clock.now();
    const seen = new Map<string, Seen>();
    for (const lease of leases) {
      const content = memberContent(lease);
      const previous = this.#seen.get(lease.name);
      seen.set(lease.name, { lease, content, since: previous?.content === content ? previous.since : now });
    }
    this.#seen = seen;
  }

  /**
   * A change the watch delivered, now: only WHEN the member was last seen changing moves (a change seen
   * now can only make it look alive longer); what it lists stays as the last list read it, the fence.
   * A Lease the lists have not shown yet is left to the next one.
   */
  saw(lease: MemberLease): void {
    const previous = this.#seen.get(lease.name);
    const content = memberContent(lease);
    if (previous === undefined || previous.content === content) return;
    this.#seen.set(lease.name, { ...previous, content, since: this.#clock.now() });
  }

  /** The members as `planHandoff` takes them; holdings `undefined` when absent or unparseable. */
  views(now: number = this.#clock.now()): MemberView[] {
    return [...this.#seen.values()].map(({ lease, since }) => ({
      identity: lease.record.holderIdentity,
      expired: unchangedFor(since, now) >= durationMs(lease),
      holdings: holdingsOf(lease),
    }));
  }

  /** The Leases seen unchanged for at least `factor` times their own duration. */
  expiredFor(factor: number, now: number = this.#clock.now()): MemberLease[] {
    return [...this.#seen.values()]
      .filter(({ lease, since }) => unchangedFor(since, now) >= factor * durationMs(lease))
      .map(({ lease }) => lease);
  }

  /**
   * The earliest moment after `after` at which a member can be judged expired (its last seen change
   * plus its lease duration), the Lease named `own` (a member never judges itself) and released ones (no
   * holder) aside; `undefined` when there is none.
   */
  nextExpiryAt(own: string, after: number): number | undefined {
    let next: number | undefined;
    for (const { lease, since } of this.#seen.values()) {
      if (lease.name === own || lease.record.holderIdentity === '') continue;
      const expiresAt = since + durationMs(lease);
      if (expiresAt > after && (next === undefined || expiresAt < next)) next = expiresAt;
    }
    return next;
  }
}

function unchangedFor(since: number, now: number): number {
  return now - since;
}

function durationMs(lease: MemberLease): number {
  return lease.record.leaseDurationSeconds * 1000;
}

function holdingsOf(lease: MemberLease): number[] | undefined {
  if (lease.holdings === undefined) return undefined;
  try {
    return parseHoldings(lease.holdings);
  } catch {
    return undefined;
  }
}
