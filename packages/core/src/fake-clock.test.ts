import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from './index.ts';
import { FakeClock, settle } from './testing.ts';

describe('FakeClock', () => {
  it('starts at now 0 and 2026-01-01 wall time unless told otherwise', () => {
    const clock = new FakeClock();
    assert.equal(clock.now(), 0);
    assert.equal(clock.wallTime(), Date.UTC(2026, 0, 1));
    const custom = new FakeClock({ nowMs: 500, wallTimeMs: Date.UTC(2025, 5, 1) });
    assert.equal(custom.now(), 500);
    assert.equal(custom.wallTime(), Date.UTC(2025, 5, 1));
  });

  it('moves the wall clock with the monotonic one', async () => {
    const clock = new FakeClock({ nowMs: 1000, wallTimeMs: 5000 });
    clock.step(250);
    assert.deepEqual([clock.now(), clock.wallTime()], [1250, 5250]);
    await clock.advance(750);
    assert.deepEqual([clock.now(), clock.wallTime()], [2000, 6000]);
  });

  it('runs due timers in due order with now() at their due time, including timers armed on the way', () => {
    const clock = new FakeClock({ nowMs: 1000 });
    const log: string[] = [];
    clock.setTimer(() => log.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => {
      log.push(`a@${clock.now()}`);
      clock.setTimer(() => log.push(`nested@${clock.now()}`), 5);
    }, 10);
    clock.setTimer(() => log.push(`b2@${clock.now()}`), 20);
    clock.setTimer(() => log.push('late'), 31);
    clock.step(30);
    assert.deepEqual(log, ['a@1010', 'nested@1015', 'b@1020', 'b2@1020']);
    assert.equal(clock.now(), 1030);
    assert.equal(clock.pendingTimers(), 1);
  });

  it('runs a timer due exactly at the target, and one armed with a negative delay at once', () => {
    const clock = new FakeClock();
    const log: string[] = [];
    clock.setTimer(() => log.push('at target'), 10);
    clock.setTimer(() => log.push('negative'), -5);
    clock.step(0);
    assert.deepEqual(log, ['negative']);
    clock.step(10);
    assert.deepEqual(log, ['negative', 'at target']);
  });

  it('does not run cancelled timers; cancelling after the run is a no-op', () => {
    const clock = new FakeClock();
    let runs = 0;
    const cancelled = clock.setTimer(() => runs++, 1);
    const ran = clock.setTimer(() => runs++, 1);
    cancelled.cancel();
    clock.step(5);
    assert.equal(runs, 1);
    ran.cancel();
    assert.equal(clock.pendingTimers(), 0);
  });

  it("counts pending timers, with or without the unref'd ones", () => {
    const clock = new FakeClock();
    clock.setTimer(() => undefined, 1);
    clock.setTimer(() => undefined, 1, { unref: true });
    assert.equal(clock.pendingTimers(), 2);
    assert.equal(clock.pendingTimers({ includeUnref: true }), 2);
    assert.equal(clock.pendingTimers({ includeUnref: false }), 1);
    clock.step(1);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('records every armed delay in order, as given', () => {
    const clock = new FakeClock();
    clock.setTimer(() => undefined, 30);
    clock.setTimer(() => undefined, -1).cancel();
    clock.setTimer(() => undefined, 0.5);
    assert.deepEqual(clock.armedDelays, [30, -1, 0.5]);
  });

  it('rejects moving backwards, by NaN or by Infinity', async () => {
    const clock = new FakeClock();
    for (const ms of [-1, Number.NaN, Infinity]) {
      assert.throws(() => {
        clock.step(ms);
      }, RangeError);
      await assert.rejects(clock.advance(ms), RangeError);
    }
    assert.equal(clock.now(), 0);
  });

  it('step() runs timers synchronously, without letting promise chains continue', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    void sleep(clock, 10)
      .then(() => {
        log.push(`first@${clock.now()}`);
        return sleep(clock, 10);
      })
      .then(() => log.push(`second@${clock.now()}`));
    clock.step(30);
    assert.deepEqual(log, []);
    await settle();
    assert.deepEqual(log, ['first@30'], 'the second sleep was armed after the step, at 30');
  });

  it('advance() lets promise chains continue before each timer, so chained waits run in the span', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    void sleep(clock, 10)
      .then(() => {
        log.push(`first@${clock.now()}`);
        return sleep(clock, 10);
      })
      .then(() => log.push(`second@${clock.now()}`));
    await clock.advance(30);
    assert.deepEqual(log, ['first@10', 'second@20']);
    assert.equal(clock.now(), 30);
  });

  it('advance() settles before arming is looked at, so work started just before it is covered', async () => {
    const clock = new FakeClock();
    let done = false;
    void Promise.resolve()
      .then(() => sleep(clock, 5))
      .then(() => (done = true));
    await clock.advance(5);
    assert.equal(done, true);
  });

  it('never moves time backwards when a timer steps the clock further than the outer move', () => {
    const clock = new FakeClock();
    clock.setTimer(() => {
      clock.step(100);
    }, 10);
    clock.step(20);
    assert.equal(clock.now(), 110);
  });

  describe('autoAdvance', () => {
    it('lets waits pass at once, moving time by exactly the wait', async () => {
      const clock = new FakeClock({ autoAdvance: true, wallTimeMs: 1_000_000 });
      await sleep(clock, 1500);
      assert.equal(clock.now(), 1500);
      assert.equal(clock.wallTime(), 1_001_500);
      await sleep(clock, 250);
      assert.equal(clock.now(), 1750);
      assert.deepEqual(clock.armedDelays, [1500, 250]);
    });

    it('runs timers in due order when several are armed at once', async () => {
      const clock = new FakeClock({ autoAdvance: true });
      const log: string[] = [];
      clock.setTimer(() => log.push(`long@${clock.now()}`), 1000);
      clock.setTimer(() => log.push(`short@${clock.now()}`), 500);
      await settle();
      assert.deepEqual(log, ['short@500', 'long@1000']);
      assert.equal(clock.now(), 1000);
    });

    it('does not move time for a timer cancelled before its turn', async () => {
      const clock = new FakeClock({ autoAdvance: true });
      clock.setTimer(() => assert.fail('cancelled'), 1000).cancel();
      await settle();
      assert.equal(clock.now(), 0);
    });

    it('is off by default: a wait stays pending until the test moves time', async () => {
      const clock = new FakeClock();
      let done = false;
      void sleep(clock, 10).then(() => (done = true));
      await settle();
      assert.equal(done, false);
      assert.equal(clock.now(), 0);
    });
  });
});
