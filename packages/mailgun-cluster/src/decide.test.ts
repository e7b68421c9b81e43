import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RECHECK_MS, MESSAGE_ID_ANNOTATION, RequestReason, decide } from './decide.ts';

const now = new Date('2030-01-01T12:00:00Z');
const settleMs = 30 * 60_000;
const attempt = (agoMs: number) => ({ id: 'a1', startedAt: new Date(now.getTime() - agoMs).toISOString() });

describe('decide', () => {
  it('claims when nothing was attempted', () => {
    assert.deepEqual(decide({ generation: 1, annotations: undefined, status: undefined }, now, settleMs), {
      action: 'claim',
      replaces: undefined,
    });
  });

  it('records and never sends once an id is in status or (after a restore without status) in the annotation', () => {
    assert.deepEqual(
      decide({ generation: 1, annotations: undefined, status: { messageID: '<m1>' } }, now, settleMs),
      { action: 'record', messageID: '<m1>' },
    );
    assert.deepEqual(
      decide(
        { generation: 1, annotations: { [MESSAGE_ID_ANNOTATION]: '<m2>' }, status: undefined },
        now,
        settleMs,
      ),
      { action: 'record', messageID: '<m2>' },
    );
    // An id wins over a pending attempt.
    assert.equal(
      decide(
        { generation: 1, annotations: undefined, status: { messageID: '<m1>', sendAttempt: attempt(0) } },
        now,
        settleMs,
      ).action,
      'record',
    );
  });

  it('an unrecorded attempt is looked up, and only counts as lost once the settle window has passed', () => {
    const young = decide(
      { generation: 1, annotations: undefined, status: { sendAttempt: attempt(10_000) } },
      now,
      settleMs,
    );
    assert.deepEqual(young, {
      action: 'lookup',
      attempt: attempt(10_000),
      settled: false,
      recheckAfterMs: MAX_RECHECK_MS,
    });
    const almost = decide(
      { generation: 1, annotations: undefined, status: { sendAttempt: attempt(settleMs - 5_000) } },
      now,
      settleMs,
    );
    assert.equal(almost.action === 'lookup' && almost.recheckAfterMs, 5_000);
    const old = decide(
      { generation: 1, annotations: undefined, status: { sendAttempt: attempt(settleMs) } },
      now,
      settleMs,
    );
    assert.equal(old.action === 'lookup' && old.settled, true);
  });

  it('an attempt with an unreadable start time never counts as settled', () => {
    const decision = decide(
      { generation: 1, annotations: undefined, status: { sendAttempt: { id: 'a1', startedAt: 'garbage' } } },
      now,
      settleMs,
    );
    assert.equal(decision.action === 'lookup' && decision.settled, false);
  });

  it('a rejection holds until the generation changes', () => {
    const rejected = {
      type: 'RequestSent',
      status: 'False' as const,
      reason: RequestReason.Rejected,
      observedGeneration: 2,
      lastTransitionTime: now.toISOString(),
    };
    assert.deepEqual(
      decide({ generation: 2, annotations: undefined, status: { conditions: [rejected] } }, now, settleMs),
      { action: 'rejected' },
    );
    assert.equal(
      decide({ generation: 3, annotations: undefined, status: { conditions: [rejected] } }, now, settleMs)
        .action,
      'claim',
    );
  });
});
