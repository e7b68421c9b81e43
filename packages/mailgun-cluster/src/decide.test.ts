import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOOKUP_SKEW_MS, MAX_RECHECK_MS, decide } from './decide.ts';
import { ConditionType, RequestSentReason } from './reasons.ts';
import {
  MESSAGE_ID_ANNOTATION,
  PAUSED_ANNOTATION,
  type CapiObject,
  type RequestObject,
  type RequestStatus,
} from './resource.ts';

const now = new Date('2030-01-01T12:00:00Z');
const settleMs = 30 * 60_000;
const created = '2030-01-01T11:00:00Z';
const attempt = (agoMs: number) => ({ id: 'a1', startedAt: new Date(now.getTime() - agoMs).toISOString() });

function object(
  status?: RequestStatus,
  metadata: { annotations?: Record<string, string>; generation?: number; creationTimestamp?: string } = {},
): RequestObject {
  return {
    metadata: { namespace: 'ns', name: 'm1', generation: 1, creationTimestamp: created, ...metadata },
    spec: { priority: 'Urgent', request: 'a cluster', requester: 'dev@example.com' },
    ...(status ? { status } : {}),
  };
}

const cluster = (paused?: boolean): CapiObject => ({
  metadata: { namespace: 'ns', name: 'c1' },
  spec: paused === undefined ? {} : { paused },
});

describe('decide', () => {
  it('claims when nothing was attempted', () => {
    assert.deepEqual(decide(object(), cluster(), now, settleMs), { action: 'claim' });
  });

  it('pauses while the Cluster is paused or the object carries the pause annotation (any value), before anything else', () => {
    assert.deepEqual(decide(object(), cluster(true), now, settleMs), { action: 'pause' });
    assert.deepEqual(decide(object({ messageID: '<m1>' }), cluster(true), now, settleMs), {
      action: 'pause',
    });
    assert.deepEqual(
      decide(object(undefined, { annotations: { [PAUSED_ANNOTATION]: '' } }), cluster(false), now, settleMs),
      { action: 'pause' },
    );
    assert.deepEqual(
      decide(object(undefined, { annotations: { [PAUSED_ANNOTATION]: '' } }), undefined, now, settleMs),
      { action: 'pause' },
    );
    assert.deepEqual(decide(object(), cluster(false), now, settleMs), { action: 'claim' });
    assert.deepEqual(
      decide(object(), undefined, now, settleMs),
      { action: 'claim' },
      'no Cluster: not paused',
    );
    assert.deepEqual(
      decide(object(), { metadata: { namespace: 'ns', name: 'c1' } }, now, settleMs),
      { action: 'claim' },
      'a Cluster without spec: not paused',
    );
  });

  it('records and never sends once an id is in status or (after a restore without status) in the annotation', () => {
    assert.deepEqual(decide(object({ messageID: '<m1>' }), cluster(), now, settleMs), {
      action: 'record',
      messageID: '<m1>',
    });
    assert.deepEqual(
      decide(
        object(undefined, { annotations: { [MESSAGE_ID_ANNOTATION]: '<m2>' } }),
        cluster(),
        now,
        settleMs,
      ),
      { action: 'record', messageID: '<m2>' },
    );
    assert.deepEqual(
      decide(
        object({ messageID: '<m1>' }, { annotations: { [MESSAGE_ID_ANNOTATION]: '<m2>' } }),
        cluster(),
        now,
        settleMs,
      ),
      { action: 'record', messageID: '<m1>' },
      'status wins over the annotation',
    );
    assert.deepEqual(
      decide(object({ messageID: '<m1>', sendAttempt: attempt(settleMs * 2) }), cluster(), now, settleMs),
      { action: 'record', messageID: '<m1>' },
      'an id wins over a pending attempt',
    );
  });

  describe('an attempt without a recorded id', () => {
    const lookupAfter = (agoMs: number) =>
      decide(object({ sendAttempt: attempt(agoMs) }), cluster(), now, settleMs);
    const since = new Date(Date.parse(created) - LOOKUP_SKEW_MS);

    it('is looked up in the events since 10 minutes before the object was created', () => {
      assert.deepEqual(lookupAfter(10_000), {
        action: 'lookup',
        attempt: attempt(10_000),
        since,
        ifNotFound: 'wait',
        retryAfterMs: MAX_RECHECK_MS,
      });
      // Without a creation time (never from the cache), from the attempt's start.
      const startedAt = new Date(now.getTime() - 10_000);
      const withoutCreation = decide(
        { ...object({ sendAttempt: attempt(10_000) }), metadata: { generation: 1 } },
        cluster(),
        now,
        settleMs,
      );
      assert.equal(
        withoutCreation.action === 'lookup' && withoutCreation.since.getTime(),
        startedAt.getTime() - LOOKUP_SKEW_MS,
      );
    });

    it('resends when absent only from the exact end of the settle window, never a millisecond earlier', () => {
      assert.deepEqual(lookupAfter(settleMs - 1), {
        action: 'lookup',
        attempt: attempt(settleMs - 1),
        since,
        ifNotFound: 'wait',
        retryAfterMs: 1,
      });
      assert.deepEqual(lookupAfter(settleMs), {
        action: 'lookup',
        attempt: attempt(settleMs),
        since,
        ifNotFound: 'resend',
      });
      assert.deepEqual(lookupAfter(settleMs + 1), {
        action: 'lookup',
        attempt: attempt(settleMs + 1),
        since,
        ifNotFound: 'resend',
      });
    });

    it('looks again after at most a minute, and exactly when the window ends if that is sooner', () => {
      const waitOf = (agoMs: number) => {
        const step = lookupAfter(agoMs);
        return step.action === 'lookup' && step.ifNotFound === 'wait' ? step.retryAfterMs : undefined;
      };
      assert.equal(waitOf(0), MAX_RECHECK_MS);
      assert.equal(waitOf(settleMs - MAX_RECHECK_MS - 1), MAX_RECHECK_MS);
      assert.equal(waitOf(settleMs - MAX_RECHECK_MS), MAX_RECHECK_MS);
      assert.equal(waitOf(settleMs - MAX_RECHECK_MS + 1), MAX_RECHECK_MS - 1);
      assert.equal(waitOf(settleMs - 5_000), 5_000);
    });

    it('with an unreadable start time never counts as settled', () => {
      const step = decide(
        object({ sendAttempt: { id: 'a1', startedAt: 'garbage' } }),
        cluster(),
        new Date(now.getTime() + 365 * 24 * 3_600_000),
        settleMs,
      );
      assert.equal(step.action === 'lookup' && step.ifNotFound, 'wait');
      assert.equal(
        step.action === 'lookup' && step.ifNotFound === 'wait' && step.retryAfterMs,
        MAX_RECHECK_MS,
      );
    });
  });

  it('a rejection holds until the generation changes; other failures claim again', () => {
    const requestSent = (reason: string) => ({
      type: ConditionType.RequestSent,
      status: 'False' as const,
      reason,
      message: '',
      observedGeneration: 2,
      lastTransitionTime: now.toISOString(),
    });
    const rejected = { conditions: [requestSent(RequestSentReason.Rejected)] };
    assert.deepEqual(decide(object(rejected, { generation: 2 }), cluster(), now, settleMs), {
      action: 'holdRejected',
    });
    assert.deepEqual(decide(object(rejected, { generation: 3 }), cluster(), now, settleMs), {
      action: 'claim',
    });
    const unavailable = { conditions: [requestSent(RequestSentReason.MailgunUnavailable)] };
    assert.deepEqual(decide(object(unavailable, { generation: 2 }), cluster(), now, settleMs), {
      action: 'claim',
    });
  });
});
