import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deadlineSignal } from './index.ts';
import { FakeClock } from './testing.ts';

describe('deadlineSignal', () => {
  it('aborts with a TimeoutError once the clock reaches the deadline, not before', async () => {
    const clock = new FakeClock();
    const { signal } = deadlineSignal(clock, 1000, new AbortController().signal);
    await clock.advance(999);
    assert.equal(signal.aborted, false);
    await clock.advance(1);
    assert.equal(signal.aborted, true);
    assert.equal((signal.reason as DOMException).name, 'TimeoutError');
    assert.match(String(signal.reason), /deadline of 1000 ms exceeded/);
  });

  it("aborts with the parent's reason when the parent aborts first, or had already", () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    const { signal } = deadlineSignal(clock, 1000, parent.signal);
    parent.abort(new Error('stopping'));
    assert.equal((signal.reason as Error).message, 'stopping');
    const gone = AbortSignal.abort(new Error('gone'));
    assert.equal((deadlineSignal(clock, 1000, gone).signal.reason as Error).message, 'gone');
  });

  it('dispose disarms the timer and lets go of the parent', async () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    const deadline = deadlineSignal(clock, 1000, parent.signal);
    deadline.dispose();
    await clock.advance(5000);
    parent.abort(new Error('later'));
    assert.equal(deadline.signal.aborted, false);
  });
});
