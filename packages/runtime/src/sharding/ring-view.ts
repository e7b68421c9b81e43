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
  /** The content of the newest version seen, by a list or by the watch. */
  readonly content: string;
  /** `clock.now()` when this content was first seen. */
  readonly since: number;
  /** The resourceVersions seen of this Lease, the newest last (at most {@link RECENT_VERSIONS}). */
  readonly versions: readonly string[];
}

/**
 * How many versions of a Lease are remembered to recognise an older one. A read returns an older version
 * when it started before a write the watch already delivered; members write once a retry period, so a
 * read is rarely more than one or two versions behind.
 */
const RECENT_VERSIONS = 16;

/**
 * Whether `version` is one seen before the newest: the read or event that shows it is older than what
 * was already seen, and shows no change. (resourceVersions are compared for equality only, as the API
 * conventions allow: each write of an object gets one never given before.)
 */
function isOlder(seen: Seen, version: string): boolean {
  return seen.versions.at(-1) !== version && seen.versions.includes(version);
}

/**
 * `seen` after a `version` not older than its newest, with `content`: changed (since now) if the content
 * is; `lease` is what planning reads from now on.
 */
function advanced(seen: Seen, lease: MemberLease, version: string, content: string, now: number): Seen {
  const versions =
    seen.versions.at(-1) === version ? seen.versions : [...seen.versions, version].slice(-RECENT_VERSIONS);
  return { lease, content, since: seen.content === content ? seen.since : now, versions };
}

export class RingView {
  readonly #clock: Clock;
  #seen = new Map<string, Seen>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Takes a read of the whole ring, now. A Lease whose content differs from the last seen counts as
   * changed from now on; one missing from the read is gone (deleted), and forgotten. A Lease the read
   * shows at a version older than one seen already (the watch delivered a write the read started
   * before) is no change: counting it as one would make the next read, showing the newer version again,
   * count a change that never happened and postpone the member's expiry by up to a tick.
   */
  observe(leases: readonly MemberLease[]): void {
    const now = this.#clock.now();
    const seen = new Map<string, Seen>();
    for (const lease of leases) {
      const content = memberContent(lease);
      const previous = this.#seen.get(lease.name);
      if (previous === undefined) {
        seen.set(lease.name, { lease, content, since: now, versions: [lease.resourceVersion] });
      } else if (isOlder(previous, lease.resourceVersion)) {
        seen.set(lease.name, { ...previous, lease });
      } else {
        seen.set(lease.name, advanced(previous, lease, lease.resourceVersion, content, now));
      }
    }
    this.#seen = seen;
  }

  /**
   * A change the watch delivered, now: only WHEN the member was last seen changing moves (a change seen
   * now can only make it look alive longer); what it lists stays as the last list read it, the fence.
   * A Lease the lists have not shown yet is left to the next one; an event older than a version already
   * seen (a list overtook it) changes nothing.
   */
  saw(lease: MemberLease): void {
    const previous = this.#seen.get(lease.name);
    if (previous === undefined || isOlder(previous, lease.resourceVersion)) return;
    const content = memberContent(lease);
    const now = this.#clock.now();
    this.#seen.set(lease.name, advanced(previous, previous.lease, lease.resourceVersion, content, now));
  }

  /** The members as `planHandoff` takes them; holdings `undefined` when absent or unparseable. */
  views(now: number = this.#clock.now()): MemberView[] {
    return [...this.#seen.values()].map(({ lease, since }) => ({
      identity: lease.record.holderIdentity,
      expired: unchangedFor(since, now) >= durationMs(lease),
      holdings: holdingsOf(lease),
    }));
  }

  /** When the current content of the Lease named `name` was first seen; `undefined` for one not seen. */
  changeSeenAt(name: string): number | undefined {
    return this.#seen.get(name)?.since;
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
