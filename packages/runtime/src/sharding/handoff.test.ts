import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assign } from './assignment.ts';
import { planHandoff, type HandoffPlan, type MemberView } from './handoff.ts';
import { random } from './random.test-support.ts';
import { BUCKETS } from './space.ts';

const ALL = Array.from({ length: BUCKETS }, (_, bucket) => bucket);

// No default for `holdings`: an explicit undefined (unreadable) would take it.
function live(identity: string, holdings: readonly number[] | undefined): MemberView {
  return { identity, expired: false, holdings };
}

function expired(identity: string, holdings: readonly number[] | undefined): MemberView {
  return { identity, expired: true, holdings };
}

/** The buckets `assign` gives `member` among `members`. */
function targetOf(member: string, members: string[]): number[] {
  return [...(assign(members).get(member) ?? [])];
}

describe('planHandoff', () => {
  it('takes everything when it is alone and holds nothing', () => {
    const plan = planHandoff({ me: 'a', held: [], members: [live('a', [])] });
    assert.deepEqual(plan, { take: ALL, release: [], keep: [], waitingFor: [] });
  });

  it('keeps what it holds in its target and takes the rest that nobody holds', () => {
    const plan = planHandoff({ me: 'a', held: [0, 1, 2], members: [] });
    assert.deepEqual(plan.keep, [0, 1, 2]);
    assert.deepEqual(plan.take, ALL.slice(3));
    assert.deepEqual(plan.release, []);
  });

  it('releases what is no longer in its target and keeps the rest, after a member joins', () => {
    const target = targetOf('a', ['a', 'b']);
    const plan = planHandoff({ me: 'a', held: ALL, members: [live('a', ALL), live('b', [])] });
    assert.deepEqual(plan.keep, target);
    assert.deepEqual(plan.release, targetOf('b', ['a', 'b']));
    assert.deepEqual(plan.take, []);
    assert.deepEqual(plan.waitingFor, []);
  });

  it('waits for a bucket of its target that another live member holds, naming it', () => {
    // b joined and holds nothing; a still holds everything: b takes nothing yet.
    const plan = planHandoff({ me: 'b', held: [], members: [live('a', ALL), live('b', [])] });
    const target = targetOf('b', ['a', 'b']);
    assert.deepEqual(plan.take, []);
    assert.deepEqual(
      plan.waitingFor,
      target.map((bucket) => ({ bucket, holders: ['a'] })),
    );
  });

  it('takes the part of its target that is free and waits for the part still held', () => {
    const target = targetOf('b', ['a', 'b']);
    const [stillHeld = -1, ...released] = target;
    const aHolds = [...targetOf('a', ['a', 'b']), stillHeld];
    const plan = planHandoff({ me: 'b', held: [], members: [live('a', aHolds)] });
    assert.deepEqual(plan.take, released);
    assert.deepEqual(plan.waitingFor, [{ bucket: stillHeld, holders: ['a'] }]);
  });

  it('lists every live holder of a bucket, sorted, once', () => {
    const target = targetOf('c', ['a', 'b', 'c']);
    const bucket = target[0] ?? -1;
    const plan = planHandoff({
      me: 'c',
      held: [],
      members: [live('b', [bucket]), live('a', [bucket]), live('b', [bucket])],
    });
    assert.deepEqual(plan.waitingFor[0], { bucket, holders: ['a', 'b'] });
    assert.equal(plan.waitingFor.length, 1);
  });

  it('ignores the holdings of expired members and leaves them out of the assignment', () => {
    const plan = planHandoff({ me: 'a', held: [], members: [expired('b', ALL), live('a', [])] });
    assert.deepEqual(plan.take, ALL);
    assert.deepEqual(plan.waitingFor, []);
  });

  it('is blocked everywhere by a live member whose holdings are unreadable, yet releases and keeps', () => {
    const [kept = -1, ...missing] = targetOf('a', ['a', 'b']);
    const foreign = targetOf('b', ['a', 'b'])[0] ?? -1;
    const plan = planHandoff({ me: 'a', held: [kept, foreign], members: [live('b', undefined)] });
    assert.deepEqual(plan.take, []);
    assert.deepEqual(plan.keep, [kept]);
    assert.deepEqual(plan.release, [foreign]);
    assert.deepEqual(
      plan.waitingFor,
      missing.map((bucket) => ({ bucket, holders: ['b'] })),
    );
  });

  it('names an unreadable member beside the members that list a bucket', () => {
    const bucket = targetOf('c', ['a', 'b', 'c'])[0] ?? -1;
    const plan = planHandoff({ me: 'c', held: [], members: [live('b', undefined), live('a', [bucket])] });
    assert.deepEqual(plan.waitingFor[0], { bucket, holders: ['a', 'b'] });
  });

  it('is not blocked by an expired member whose holdings could not be read', () => {
    const plan = planHandoff({ me: 'a', held: [], members: [expired('b', undefined)] });
    assert.deepEqual(plan.take, ALL);
  });

  it('treats a released Lease (no holder) as no member, whatever it still lists', () => {
    const plan = planHandoff({ me: 'a', held: [], members: [live('', ALL), live('', undefined)] });
    assert.deepEqual(plan.take, ALL);
    assert.deepEqual(plan.waitingFor, []);
  });

  it('goes by what it holds, not by what its own Lease says', () => {
    const plan = planHandoff({ me: 'a', held: [1], members: [live('a', [2]), expired('a', undefined)] });
    assert.deepEqual(plan.keep, [1]);
    assert.deepEqual(
      plan.take,
      ALL.filter((bucket) => bucket !== 1),
    );
    assert.deepEqual(plan.release, []);
  });

  it('sorts and de-duplicates what it holds, and refuses what is not a bucket or an empty identity', () => {
    const plan = planHandoff({ me: 'a', held: [9, 3, 9], members: [] });
    assert.deepEqual(plan.keep, [3, 9]);
    assert.throws(() => planHandoff({ me: 'a', held: [256], members: [] }), RangeError);
    assert.throws(() => planHandoff({ me: '', held: [], members: [] }), RangeError);
  });
});

type ReplicaState = 'live' | 'expired' | 'released';

/**
 * A ring in a test: replicas that plan and apply (drain, write their Lease) one at a time, each seeing
 * every Lease as last written.
 */
class Ring {
  readonly replicas = new Map<string, { held: number[]; state: ReplicaState }>();

  /** A new replica, or one restarted under its old name: its Lease acquired holding nothing. */
  join(identity: string): void {
    this.replicas.set(identity, { held: [], state: 'live' });
  }

  /** A crash: the Lease stays as last written until the others judge it expired. */
  expire(identity: string): void {
    this.#set(identity, 'expired');
  }

  /**
   * A graceful exit: drained, then the Lease released (holder emptied). Its holdings stay as last
   * written, to show that a released Lease blocks nothing.
   */
  leave(identity: string): void {
    this.#set(identity, 'released');
  }

  #set(identity: string, state: ReplicaState): void {
    const replica = this.replicas.get(identity);
    assert.ok(replica !== undefined, identity);
    replica.state = state;
  }

  live(): string[] {
    return [...this.replicas].filter(([, { state }]) => state === 'live').map(([identity]) => identity);
  }

  view(): MemberView[] {
    return [...this.replicas].map(([identity, { held, state }]) => ({
      identity: state === 'released' ? '' : identity,
      expired: state === 'expired',
      holdings: held,
    }));
  }

  plan(identity: string, view: MemberView[] = this.view()): HandoffPlan {
    const replica = this.replicas.get(identity);
    assert.ok(replica?.state === 'live', identity);
    return planHandoff({ me: identity, held: replica.held, members: view });
  }

  apply(identity: string, plan: HandoffPlan): void {
    const replica = this.replicas.get(identity);
    assert.ok(replica !== undefined, identity);
    replica.held = [...plan.keep, ...plan.take].sort((a, b) => a - b);
  }

  step(identity: string): void {
    this.apply(identity, this.plan(identity));
  }

  /** Every live replica steps once, in the order `next` shuffles them into. */
  tick(next: () => number): void {
    const order = this.live()
      .map((identity) => ({ identity, key: next() }))
      .sort((a, b) => a.key - b.key);
    for (const { identity } of order) {
      this.step(identity);
      this.assertNoBucketHeldTwice();
    }
  }

  assertNoBucketHeldTwice(): void {
    const holder = new Map<number, string>();
    for (const identity of this.live()) {
      for (const bucket of this.replicas.get(identity)?.held ?? []) {
        const other = holder.get(bucket);
        assert.equal(other, undefined, `bucket ${bucket} held by ${other} and ${identity}`);
        holder.set(bucket, identity);
      }
    }
  }

  /** The fixed point: every bucket held by exactly one live replica, each holding its assignment. */
  assertSettled(): void {
    const target = assign(this.live());
    for (const identity of this.live()) {
      assert.deepEqual(this.replicas.get(identity)?.held, target.get(identity), identity);
    }
    assert.equal([...target.values()].flat().length, BUCKETS);
  }
}

describe('planHandoff, applied by a ring of replicas', () => {
  it('settles within two ticks of a stable ring, whatever the order, and stays settled', () => {
    const next = random(1);
    for (let round = 0; round < 20; round++) {
      const ring = new Ring();
      for (const identity of ['ctrl-0', 'ctrl-1', 'ctrl-2', 'ctrl-3'].slice(0, 1 + (round % 4))) {
        ring.join(identity);
      }
      ring.tick(next);
      ring.tick(next);
      ring.assertSettled();
      const settled = ring.view();
      ring.tick(next);
      assert.deepEqual(ring.view(), settled);
    }
  });

  it('hands buckets to a joining member only after their holder released them', () => {
    const ring = new Ring();
    ring.join('a');
    ring.step('a');
    ring.join('b');
    ring.step('b'); // a still holds everything: b waits
    assert.deepEqual(ring.replicas.get('b')?.held, []);
    ring.step('a'); // a releases b's part
    ring.assertNoBucketHeldTwice();
    ring.step('b');
    ring.assertSettled();
  });

  it('moves the buckets of an expired member to the others, and takes a restarted one back in', () => {
    const next = random(2);
    const ring = new Ring();
    for (const identity of ['a', 'b', 'c']) ring.join(identity);
    ring.tick(next);
    ring.tick(next);
    ring.expire('b');
    ring.tick(next);
    ring.tick(next);
    ring.assertSettled();
    assert.deepEqual(ring.live(), ['a', 'c']);
    ring.join('b');
    ring.tick(next);
    ring.tick(next);
    ring.assertSettled();
  });

  it('moves the buckets of a member that left gracefully at once', () => {
    const ring = new Ring();
    for (const identity of ['a', 'b', 'c']) ring.join(identity);
    for (const identity of ['a', 'b', 'c', 'a', 'b', 'c']) ring.step(identity);
    ring.leave('b');
    ring.step('a');
    ring.step('c');
    ring.assertSettled();
  });

  it('never lets two live replicas hold one bucket, through random joins, crashes, exits and orders', () => {
    const next = random(39);
    for (let round = 0; round < 20; round++) {
      const ring = new Ring();
      let joined = 0;
      for (let tick = 0; tick < 30; tick++) {
        const event = next();
        const live = ring.live();
        const someone = live[Math.floor(next() * live.length)];
        if (event < 0.3 || live.length === 0) ring.join(`replica-${joined++}`);
        else if (event < 0.4 && someone !== undefined) ring.expire(someone);
        else if (event < 0.5 && someone !== undefined) ring.leave(someone);
        ring.assertNoBucketHeldTwice();
        ring.tick(next);
      }
      ring.tick(next);
      ring.tick(next);
      ring.assertSettled();
    }
  });

  it('never takes a bucket twice when all replicas plan from one snapshot and write at once', () => {
    const ring = new Ring();
    for (let tick = 0; tick < 12; tick++) {
      if (tick % 3 === 0) ring.join(`replica-${tick}`);
      if (tick === 7) ring.expire('replica-3');
      const snapshot = ring.view();
      const plans = ring.live().map((identity) => [identity, ring.plan(identity, snapshot)] as const);
      for (const [identity, plan] of plans) ring.apply(identity, plan);
      ring.assertNoBucketHeldTwice();
    }
    ring.assertSettled();
  });

  it('resolves a bucket held twice after views that differed agree again', () => {
    // Views differed: c judged a's Lease expired (a renewed late) and took its part of the space, while a,
    // not yet aware of c, kept everything.
    const ring = new Ring();
    ring.join('a');
    ring.join('c');
    const cPart = targetOf('c', ['a', 'c']);
    ring.apply('a', { take: [], release: [], keep: ALL, waitingFor: [] });
    ring.apply('c', { take: cPart, release: [], keep: [], waitingFor: [] });
    assert.throws(() => {
      ring.assertNoBucketHeldTwice();
    }, assert.AssertionError);
    // Now both see both as live: c keeps its part, a releases it.
    const cPlan = ring.plan('c');
    assert.deepEqual(cPlan.keep, cPart);
    ring.apply('c', cPlan);
    ring.step('a');
    ring.assertNoBucketHeldTwice();
    ring.assertSettled();
  });
});
