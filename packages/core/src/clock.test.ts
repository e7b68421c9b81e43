import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { realClock, sleep } from './index.ts';
import { FakeClock } from './testing.ts';

const maxTimeoutMs = 2 ** 31 - 1;

describe('realClock', () => {
  it('reads performance.now() and Date.now()', () => {
    const before = { now: performance.now(), wall: Date.now() };
    const now = realClock.now();
    const wall = realClock.wallTime();
    assert.ok(now >= before.now && now <= performance.now());
    assert.ok(wall >= before.wall && wall <= Date.now());
  });

  it('runs a timer once, and not at all once cancelled', async () => {
    const ran: string[] = [];
    realClock.setTimer(() => ran.push('kept'), 1);
    realClock.setTimer(() => ran.push('cancelled'), 1).cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(ran, ['kept']);
  });

  it("re-arms delays longer than Node's limit until the whole delay has passed", (t) => {
    const armed: { delayMs: number; callback: () => void; unref: boolean }[] = [];
    const cleared: unknown[] = [];
    t.mock.method(globalThis, 'setTimeout', (callback: () => void, delayMs: number) => {
      const entry = { delayMs, callback, unref: false };
      armed.push(entry);
      return {
        unref() {
          entry.unref = true;
        },
      };
    });
    t.mock.method(globalThis, 'clearTimeout', (timeout: unknown) => cleared.push(timeout));
    let fired = 0;
    const timer = realClock.setTimer(() => fired++, 2 * maxTimeoutMs + 5, { unref: true });
    assert.deepEqual(
      armed.map((entry) => entry.delayMs),
      [maxTimeoutMs],
    );
    armed[0]?.callback();
    armed[1]?.callback();
    assert.deepEqual(
      armed.map((entry) => entry.delayMs),
      [maxTimeoutMs, maxTimeoutMs, 5],
    );
    assert.equal(fired, 0, 'not due before the last part');
    assert.ok(armed.every((entry) => entry.unref));
    armed[2]?.callback();
    assert.equal(fired, 1);
    timer.cancel();
    assert.equal(cleared.length, 1, 'cancel clears the timeout armed last');
  });

  it("arms negative delays as 0 and keeps timers ref'd unless asked", (t) => {
    const armed: { delayMs: number; unref: boolean }[] = [];
    t.mock.method(globalThis, 'setTimeout', (_callback: () => void, delayMs: number) => {
      const entry = { delayMs, unref: false };
      armed.push(entry);
      return {
        unref() {
          entry.unref = true;
        },
      };
    });
    realClock.setTimer(() => undefined, -5);
    assert.deepEqual(armed, [{ delayMs: 0, unref: false }]);
  });

  describe('process lifetime', () => {
    const entry = fileURLToPath(new URL('./index.ts', import.meta.url));
    const run = (script: string): { status: number | null; stdout: string } => {
      const result = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', `import * as core from ${JSON.stringify(entry)};\n${script}`],
        { encoding: 'utf8', timeout: 10_000 },
      );
      assert.equal(result.signal, null, `the process did not exit by itself: ${result.stderr}`);
      return { status: result.status, stdout: result.stdout };
    };

    it("a ref'd timer keeps the process alive until it runs", () => {
      const { status, stdout } = run(`core.realClock.setTimer(() => console.log('ran'), 30);`);
      assert.equal(status, 0);
      assert.equal(stdout.trim(), 'ran');
    });

    it("an unref'd timer does not, even a long one being re-armed", () => {
      const { status, stdout } = run(`
        core.realClock.setTimer(() => console.log('ran'), 60_000, { unref: true });
        core.realClock.setTimer(() => console.log('ran'), ${3 * maxTimeoutMs}, { unref: true });
      `);
      assert.equal(status, 0);
      assert.equal(stdout, '');
    });
  });
});

describe('sleep', () => {
  it('resolves once the delay has passed on the clock', async () => {
    const clock = new FakeClock();
    let done = false;
    void sleep(clock, 100).then(() => (done = true));
    await clock.advance(99);
    assert.equal(done, false);
    await clock.advance(1);
    assert.equal(done, true);
  });

  it('resolves early, without rejecting, when the signal aborts, and disarms its timer', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const sleeping = sleep(clock, 1000, controller.signal);
    assert.equal(clock.pendingTimers(), 1);
    controller.abort(new Error('stop'));
    await sleeping;
    assert.equal(clock.now(), 0);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('resolves at once for an already aborted signal, arming nothing', async () => {
    const clock = new FakeClock();
    await sleep(clock, 1000, AbortSignal.abort());
    assert.equal(clock.pendingTimers(), 0);
    assert.deepEqual(clock.armedDelays, []);
  });

  it('leaves no abort listener behind once it slept', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const sleeping = sleep(clock, 10, controller.signal);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    clock.step(10);
    await sleeping;
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('passes the timer options on', () => {
    const clock = new FakeClock();
    void sleep(clock, 10, undefined, { unref: true });
    void sleep(clock, 10);
    assert.equal(clock.pendingTimers(), 2);
    assert.equal(clock.pendingTimers({ includeUnref: false }), 1);
  });
});
