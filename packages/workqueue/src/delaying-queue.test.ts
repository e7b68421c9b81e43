import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Clock } from '@loopwright/core';
import { FakeClock } from '@loopwright/core/testing';
import { newRateLimitingQueue, type RateLimitingQueue } from './index.ts';
import { takeReady } from './queue.test-support.ts';

function setup(): { clock: FakeClock; queue: RateLimitingQueue<string> } {
  const clock = new FakeClock();
  return { clock, queue: newRateLimitingQueue({ clock }) };
}

/** Wraps a clock to count setTimer calls. */
function countingClock(inner: Clock): Clock & { armed: number } {
  const counting = {
    armed: 0,
    now: () => inner.now(),
    wallTime: () => inner.wallTime(),
    setTimer: (...args: Parameters<Clock['setTimer']>) => {
      counting.armed++;
      return inner.setTimer(...args);
    },
  };
  return counting;
}

describe('delaying queue: addAfter', () => {
  it('treats a delay <= 0 as a plain add, without a timer', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    assert.deepEqual(takeReady(queue), ['a', 'b']);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('adds the key exactly when its delay has passed', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    assert.equal(queue.len(), 0);
    clock.step(99);
    assert.equal(queue.len(), 0);
    clock.step(1);
    assert.deepEqual(takeReady(queue), ['a']);
  });

  it('wakes a waiting getter when the delay ends', async () => {
    const { clock, queue } = setup();
    const got = queue.get();
    queue.addAfter('a', 10);
    clock.step(10);
    assert.deepEqual(await got, { key: 'a', priority: 0, shutdown: false });
  });

  it('keeps the earliest ready time: a shorter delay moves a waiting key earlier, and it runs once', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    clock.step(10);
    queue.addAfter('a', 40); // ready at 50
    clock.step(40);
    assert.deepEqual(takeReady(queue), ['a']);
    clock.step(1000);
    assert.deepEqual(takeReady(queue), [], 'the superseded 100 ms entry is gone');
  });

  it('ignores a later addAfter for a waiting key (it does not postpone it)', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 50);
    queue.addAfter('a', 100);
    clock.step(50);
    assert.deepEqual(takeReady(queue), ['a']);
    clock.step(1000);
    assert.deepEqual(takeReady(queue), []);
  });

  it('a key waiting delayed and added directly runs now and again when the delay ends (client-go)', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    queue.add('a');
    assert.deepEqual(takeReady(queue), ['a']);
    clock.step(100);
    assert.deepEqual(takeReady(queue), ['a']);
  });

  it('the delayed add dedups with a direct add that is still waiting', () => {
    const { clock, queue } = setup();
    queue.add('a');
    queue.addAfter('a', 100);
    clock.step(100);
    assert.equal(queue.len(), 1);
    assert.deepEqual(takeReady(queue), ['a']);
  });

  it('a delay ending while the key is processing re-runs it after done()', () => {
    const { clock, queue } = setup();
    queue.add('a');
    const item = queue.tryGet();
    assert.deepEqual(item, { key: 'a', priority: 0, shutdown: false });
    queue.addAfter('a', 10);
    clock.step(10);
    assert.equal(queue.len(), 0, 'still processing');
    queue.done('a');
    assert.deepEqual(takeReady(queue), ['a']);
  });

  it('hands keys out by ready time, equal times in addAfter order', () => {
    const { clock, queue } = setup();
    queue.addAfter('c', 30);
    queue.addAfter('a', 10);
    queue.addAfter('b1', 20);
    queue.addAfter('b2', 20);
    queue.add('now');
    clock.step(30);
    assert.deepEqual(takeReady(queue), ['now', 'a', 'b1', 'b2', 'c']);
  });

  it('arms one timer for many waiting keys, re-arming only when a new earliest key arrives', () => {
    const fake = new FakeClock();
    const clock = countingClock(fake);
    const queue = newRateLimitingQueue({ clock });
    for (let i = 1; i <= 1000; i++) {
      queue.addAfter(`k${i}`, i);
      assert.equal(fake.pendingTimers(), 1);
    }
    assert.equal(clock.armed, 1, 'later keys do not touch the timer');
    queue.addAfter('early', 0.5);
    assert.equal(fake.pendingTimers(), 1);
    assert.equal(clock.armed, 2, 'a new earliest key re-arms the one timer');
    fake.step(0.5);
    assert.deepEqual(takeReady(queue), ['early']);
    assert.equal(fake.pendingTimers(), 1, 'the timer moves on to the next key');
    fake.step(1000);
    assert.equal(takeReady(queue).length, 1000);
    assert.equal(fake.pendingTimers(), 0, 'no timer once nothing waits');
  });

  it('drains 100k keys with random delays in ready-time order', () => {
    const { clock, queue } = setup();
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const count = 100_000;
    const delays = Array.from({ length: count }, () => 1 + Math.floor(random() * 10_000));
    delays.forEach((delay, i) => {
      queue.addAfter(`k${i}`, delay);
    });
    assert.equal(clock.pendingTimers(), 1);
    clock.step(10_000);
    // Array.prototype.sort is stable: equal delays keep addAfter order, as the queue must.
    const expected = delays
      .map((delay, i) => ({ delay, key: `k${i}` }))
      .sort((x, y) => x.delay - y.delay)
      .map(({ key }) => key);
    assert.deepEqual(takeReady(queue), expected);
  });

  it('drops waiting keys and clears the timer on shutdown; later addAfter is ignored', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 10);
    queue.shutDown();
    assert.equal(clock.pendingTimers(), 0);
    queue.addAfter('b', 10);
    queue.addAfter('c', 0);
    assert.equal(clock.pendingTimers(), 0);
    clock.step(100);
    assert.equal(queue.len(), 0);
  });

  it('drops waiting keys and clears the timer on shutDownWithDrain() too', async () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 10);
    await queue.shutDownWithDrain();
    assert.equal(clock.pendingTimers(), 0);
    clock.step(100);
    assert.equal(queue.len(), 0);
  });

  it('never adds a key delayed by Infinity and arms no timer for it', () => {
    const { clock, queue } = setup();
    queue.addAfter('never', Infinity);
    assert.equal(clock.pendingTimers(), 0);
    queue.addAfter('soon', 10);
    clock.step(10);
    assert.deepEqual(takeReady(queue), ['soon']);
    assert.equal(clock.pendingTimers(), 0);
    clock.step(1e12);
    assert.equal(queue.len(), 0);
  });

  it('rejects a NaN delay', () => {
    const { queue } = setup();
    assert.throws(() => {
      queue.addAfter('a', Number.NaN);
    }, RangeError);
  });
});

describe('delaying queue: process lifetime (real clock)', () => {
  const entry = fileURLToPath(new URL('./index.ts', import.meta.url));
  const run = (script: string): { status: number | null; stdout: string } => {
    const result = spawnSync(
      process.execPath,
      [
        '--conditions=development',
        '--input-type=module',
        '-e',
        `import * as wq from ${JSON.stringify(entry)};\n${script}`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    );
    assert.equal(result.signal, null, `the process did not exit by itself: ${result.stderr}`);
    return { status: result.status, stdout: result.stdout };
  };

  it('keeps the process alive while a delayed key waits, and lets it exit after shutdown', () => {
    const { status, stdout } = run(`
      const queue = wq.newRateLimitingQueue({ name: 'q', metricsProvider: {
        newDepthMetric: () => ({ inc() {}, dec() {} }), newAddsMetric: () => ({ inc() {} }),
        newLatencyMetric: () => ({ observe() {} }), newWorkDurationMetric: () => ({ observe() {} }),
        newUnfinishedWorkSecondsMetric: () => ({ set() {} }),
        newLongestRunningProcessorSecondsMetric: () => ({ set() {} }), newRetriesMetric: () => ({ inc() {} }),
      } });
      queue.addAfter('a', 30);
      const item = await queue.get();
      console.log(item.key);
      queue.addAfter('b', 3_600_000);
      queue.shutDown();
    `);
    assert.equal(status, 0);
    assert.equal(stdout.trim(), 'a', 'the delay timer kept the process alive until the key arrived');
  });

  it('does not keep the process alive for metrics alone', () => {
    const { status } = run(`
      const provider = new Proxy({}, { get: () => () => ({ inc() {}, dec() {}, observe() {}, set() {} }) });
      const queue = wq.newRateLimitingQueue({ name: 'q', metricsProvider: provider });
      queue.add('a');
    `);
    assert.equal(status, 0);
  });
});
