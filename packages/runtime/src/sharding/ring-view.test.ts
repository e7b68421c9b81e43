import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { HOLDINGS_ANNOTATION } from './holdings.ts';
import { decodeMemberLease, type MemberLease } from './member-lease.ts';
import { RingView } from './ring-view.ts';

/**
 * A member Lease of `identity` renewed at `renew` (seconds), listing `holdings` (no annotation for
 * `null`), with a lease of `leaseDurationSeconds`.
 */
function lease(
  identity: string,
  renew: number,
  holdings: string | null = '',
  leaseDurationSeconds = 15,
): MemberLease {
  return decodeMemberLease(
    {
      metadata: {
        name: `ring-${identity}`,
        resourceVersion: String(renew),
        ...(holdings === null ? {} : { annotations: { [HOLDINGS_ANNOTATION]: holdings } }),
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds,
        renewTime: new Date(Date.UTC(2026, 0, 1) + renew * 1000).toISOString().replace('Z', '000Z'),
      },
    },
    'GET',
  );
}

function expiredOf(view: RingView, now?: number): Record<string, boolean> {
  return Object.fromEntries(view.views(now).map(({ identity, expired }) => [identity, expired]));
}

describe('RingView', () => {
  it('judges a Lease expired once its content was seen unchanged for its own lease duration', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1), lease('b', 1, '', 5)]);
    await clock.advance(4_999);
    view.observe([lease('a', 1), lease('b', 1, '', 5)]);
    assert.deepEqual(expiredOf(view), { a: false, b: false });
    assert.deepEqual(expiredOf(view, 5_000), { a: false, b: true });
    assert.deepEqual(expiredOf(view, 14_999), { a: false, b: true });
    assert.deepEqual(expiredOf(view, 15_000), { a: true, b: true });
  });

  it('counts from when it first saw the content, whatever the renewTime says', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    // A renewTime far in the past (a skewed node) does not make a Lease first seen now expired.
    view.observe([lease('a', -3_600)]);
    assert.deepEqual(expiredOf(view), { a: false });
    await clock.advance(10_000);
    // A changed record (a renewal) starts the count again.
    view.observe([lease('a', -3_590)]);
    assert.deepEqual(expiredOf(view, 24_999), { a: false });
    assert.deepEqual(expiredOf(view, 25_000), { a: true });
  });

  it('counts a change of holdings alone as a change', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1, '0-3')]);
    await clock.advance(10_000);
    view.observe([lease('a', 1, '0-4')]);
    assert.deepEqual(expiredOf(view, 15_000), { a: false });
    assert.deepEqual(expiredOf(view, 25_000), { a: true });
  });

  it('forgets a Lease missing from a read: a Lease seen again counts from then', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1), lease('b', 1)]);
    await clock.advance(10_000);
    view.observe([lease('a', 1)]);
    assert.deepEqual(expiredOf(view), { a: false });
    await clock.advance(10_000);
    view.observe([lease('a', 1), lease('b', 1)]);
    assert.deepEqual(expiredOf(view), { a: true, b: false });
  });

  it('parses holdings, and gives undefined for absent or unparseable ones', () => {
    const view = new RingView(new FakeClock());
    view.observe([lease('a', 1, '0-2,7'), lease('b', 1, ''), lease('c', 1, null), lease('d', 1, '5-5')]);
    assert.deepEqual(
      view.views().map(({ identity, holdings }) => [identity, holdings]),
      [
        ['a', [0, 1, 2, 7]],
        ['b', []],
        ['c', undefined],
        ['d', undefined],
      ],
    );
  });

  it('passes a released Lease (no holder) on with its empty identity', () => {
    const view = new RingView(new FakeClock());
    view.observe([lease('', 1)]);
    assert.deepEqual(view.views(), [{ identity: '', expired: false, holdings: [] }]);
  });

  it('lists the Leases unchanged for a multiple of their own duration', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1), lease('b', 1, '', 5)]);
    await clock.advance(49_999);
    view.observe([lease('a', 1), lease('b', 1, '', 5)]);
    assert.deepEqual(view.expiredFor(10), []);
    assert.deepEqual(
      view.expiredFor(10, 50_000).map(({ name }) => name),
      ['ring-b'],
    );
    assert.deepEqual(
      view.expiredFor(10, 150_000).map(({ name }) => name),
      ['ring-a', 'ring-b'],
    );
  });

  it('counts a change the watch delivered from when it arrived, and the next list seeing it keeps that', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1)]);
    await clock.advance(4_000);
    view.saw(lease('a', 5));
    await clock.advance(2_000);
    view.observe([lease('a', 5)]);
    assert.deepEqual(expiredOf(view, 18_999), { a: false });
    assert.deepEqual(expiredOf(view, 19_000), { a: true });
  });

  it('takes nothing but the time of the change from the watch: holdings stay as the last list read them', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1, '0-3')]);
    await clock.advance(1_000);
    // An event older than the list (or newer: the fence is the list either way).
    view.saw(lease('a', 0, '0-9'));
    assert.deepEqual(view.views(), [{ identity: 'a', expired: false, holdings: [0, 1, 2, 3] }]);
    // A later list showing the version it showed before is no change: the count goes on from the event
    // (resourceVersions are opaque: the event's, never seen before, counts as the newest).
    await clock.advance(1_000);
    view.observe([lease('a', 1, '0-3')]);
    assert.deepEqual(expiredOf(view, 15_999), { a: false });
    assert.deepEqual(expiredOf(view, 16_000), { a: true });
  });

  it('takes a list older than an event already seen for no change: the next list does not restart the count', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1, '0-3')]);
    await clock.advance(1_000);
    view.saw(lease('a', 2, '0-3')); // the member's last write, seen when it happened
    await clock.advance(500);
    // A list that started before that write: the old version again. Its holdings are what plans read.
    view.observe([lease('a', 1, '0-1')]);
    assert.deepEqual(view.views(), [{ identity: 'a', expired: false, holdings: [0, 1] }]);
    await clock.advance(1_000);
    view.observe([lease('a', 2, '0-3')]);
    assert.deepEqual(expiredOf(view, 15_999), { a: false });
    assert.deepEqual(expiredOf(view, 16_000), { a: true });
    assert.equal(view.nextExpiryAt('own', 2_500), 16_000);
  });

  it('ignores an event older than a version a list already showed', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('a', 1)]);
    await clock.advance(1_000);
    view.observe([lease('a', 2)]);
    await clock.advance(500);
    view.saw(lease('a', 1)); // delivered late
    assert.deepEqual(expiredOf(view, 15_999), { a: false });
    assert.deepEqual(expiredOf(view, 16_000), { a: true });
  });

  it('leaves a Lease no list has shown yet to the next list, and ignores an event that changes nothing', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.saw(lease('a', 1));
    assert.deepEqual(view.views(), []);
    view.observe([lease('b', 1)]);
    await clock.advance(10_000);
    view.saw(lease('b', 1));
    assert.deepEqual(expiredOf(view, 15_000), { b: true });
  });

  it('gives the next moment a member other than its own, held and not planned with yet, can expire', async () => {
    const clock = new FakeClock();
    const view = new RingView(clock);
    view.observe([lease('own', 1), lease('a', 1), lease('b', 1, '', 5), lease('', 1, '', 1)]);
    assert.equal(view.nextExpiryAt('ring-own', 0), 5_000);
    await clock.advance(3_000);
    view.saw(lease('b', 2, '', 5));
    assert.equal(view.nextExpiryAt('ring-own', 3_000), 8_000);
    // Expiries up to `after` were planned with already.
    assert.equal(view.nextExpiryAt('ring-own', 8_000), 15_000);
    assert.equal(view.nextExpiryAt('ring-own', 15_000), undefined);
    assert.equal(new RingView(clock).nextExpiryAt('ring-own', 0), undefined);
  });
});
