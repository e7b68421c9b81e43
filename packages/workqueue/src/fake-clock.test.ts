import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './index.ts';

describe('FakeClock', () => {
  it('runs due timers in due order with now() at their due time, including timers armed on the way', () => {
    const clock = new FakeClock(1000);
    const log: string[] = [];
    clock.setTimer(() => log.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => {
      log.push(`a@${clock.now()}`);
      clock.setTimer(() => log.push(`nested@${clock.now()}`), 5);
    }, 10);
    clock.setTimer(() => log.push(`b2@${clock.now()}`), 20);
    clock.setTimer(() => log.push('late'), 31);
    clock.advance(30);
    assert.deepEqual(log, ['a@1010', 'nested@1015', 'b@1020', 'b2@1020']);
    assert.equal(clock.now(), 1030);
    assert.equal(clock.armedTimers(), 1);
  });

  it("does not run cancelled timers, and counts unref'd ones separately", () => {
    const clock = new FakeClock();
    let ran = false;
    const timer = clock.setTimer(() => (ran = true), 1);
    clock.setTimer(() => undefined, 1, { unref: true });
    assert.equal(clock.armedTimers({ includeUnref: false }), 1);
    timer.cancel();
    clock.advance(5);
    assert.equal(ran, false);
    assert.equal(clock.armedTimers(), 0);
  });

  it('rejects moving backwards', () => {
    assert.throws(() => {
      new FakeClock().advance(-1);
    }, RangeError);
  });
});
