import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { reconcileDeadline } from './reconcile-deadline.ts';

describe('reconcileDeadline', () => {
  it('aborts the signal with a TimeoutError when the timeout passes, after reporting it once', () => {
    const clock = new FakeClock();
    const reports: boolean[] = [];
    const deadline = reconcileDeadline(
      new AbortController().signal,
      1000,
      () => {
        reports.push(deadline.signal.aborted);
      },
      clock,
    );
    clock.step(999);
    assert.equal(deadline.signal.aborted, false);
    assert.equal(deadline.timedOut(), false);
    clock.step(1);
    assert.deepEqual(reports, [false], 'reported once, before the signal aborts');
    assert.equal(deadline.signal.aborted, true);
    assert.equal(deadline.timedOut(), true);
    const reason = deadline.signal.reason as DOMException;
    assert.equal(reason.name, 'TimeoutError');
    assert.equal(reason.message, 'reconcile timed out after 1000 ms');
  });

  it('never passes once cleared', () => {
    const clock = new FakeClock();
    let reported = 0;
    const deadline = reconcileDeadline(new AbortController().signal, 1000, () => reported++, clock);
    deadline.clear();
    assert.equal(clock.pendingTimers({ includeUnref: true }), 0);
    clock.step(5000);
    assert.equal(reported, 0);
    assert.equal(deadline.signal.aborted, false);
    assert.equal(deadline.timedOut(), false);
  });

  it("aborts with the controller's signal, which is no timeout", () => {
    const clock = new FakeClock();
    const stop = new AbortController();
    const deadline = reconcileDeadline(stop.signal, 1000, () => assert.fail('no timeout'), clock);
    stop.abort(new Error('shutdown'));
    assert.equal(deadline.signal.aborted, true);
    assert.equal((deadline.signal.reason as Error).message, 'shutdown');
    assert.equal(deadline.timedOut(), false);
    deadline.clear();
  });

  for (const timeoutMs of [0, -1, Number.NaN]) {
    it(`has no timer and passes the controller's own signal for ${timeoutMs}`, () => {
      const clock = new FakeClock();
      const stop = new AbortController();
      const deadline = reconcileDeadline(stop.signal, timeoutMs, () => assert.fail('no timeout'), clock);
      assert.equal(deadline.signal, stop.signal);
      assert.equal(clock.pendingTimers({ includeUnref: true }), 0);
      clock.step(1e9);
      assert.equal(deadline.timedOut(), false);
      deadline.clear();
    });
  }
});
