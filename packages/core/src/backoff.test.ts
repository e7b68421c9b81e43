import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff, BackoffManager, jitter, type BackoffOptions } from './index.ts';
import { FakeClock } from './testing.ts';

const steps = (backoff: { step(): number }, count: number): number[] =>
  Array.from({ length: count }, () => backoff.step());

/** A random source that replays `values` and counts its calls. */
function scripted(...values: number[]): { random: () => number; calls: () => number } {
  let calls = 0;
  return {
    random: () => values[calls++ % values.length] ?? 0,
    calls: () => calls,
  };
}

describe('jitter', () => {
  it('returns duration + random * maxFactor * duration', () => {
    assert.equal(
      jitter(1000, 0.1, () => 0),
      1000,
    );
    assert.equal(
      jitter(1000, 0.1, () => 0.5),
      1050,
    );
    assert.equal(
      jitter(2000, 1.2, () => 0.5),
      3200,
    );
  });

  it('stays within [duration, duration * (1 + maxFactor)) for any random in [0, 1)', () => {
    for (const random of [0, 0.25, 0.999999]) {
      const delay = jitter(800, 1, () => random);
      assert.ok(delay >= 800 && delay < 1600, `${random} -> ${delay}`);
    }
  });

  it('takes maxFactor <= 0 as 1.0, as client-go does', () => {
    assert.equal(
      jitter(1000, 0, () => 0.5),
      1500,
    );
    assert.equal(
      jitter(1000, -3, () => 0.5),
      1500,
    );
  });

  it('uses Math.random by default', () => {
    const delay = jitter(1000, 1);
    assert.ok(delay >= 1000 && delay < 2000);
  });
});

describe('Backoff (client-go wait.Backoff.Step)', () => {
  it('multiplies by factor once per step and returns the delay before the multiplication', () => {
    const backoff = new Backoff({ durationMs: 100, factor: 3, steps: 4 });
    assert.deepEqual(steps(backoff, 4), [100, 300, 900, 2700]);
  });

  it('keeps the last delay once the steps are used up', () => {
    const backoff = new Backoff({ durationMs: 100, factor: 2, steps: 3 });
    assert.deepEqual(steps(backoff, 6), [100, 200, 400, 800, 800, 800]);
  });

  it('steps: 0 (or fewer) never changes the delay, whatever the factor', () => {
    for (const count of [0, -1]) {
      const backoff = new Backoff({ durationMs: 250, factor: 10, steps: count });
      assert.deepEqual(steps(backoff, 3), [250, 250, 250]);
    }
  });

  it('steps: 1 changes the delay once', () => {
    const backoff = new Backoff({ durationMs: 250, factor: 10, steps: 1 });
    assert.deepEqual(steps(backoff, 3), [250, 2500, 2500]);
  });

  it('steps: Infinity grows until the cap', () => {
    const backoff = new Backoff({ durationMs: 1, factor: 2, steps: Infinity, capMs: 2 ** 40 });
    const delays = steps(backoff, 45);
    assert.equal(delays[40], 2 ** 40);
    assert.deepEqual(delays.slice(41), [2 ** 40, 2 ** 40, 2 ** 40, 2 ** 40]);
  });

  it('factor 0 keeps the delay constant while steps are used; a factor below 1 shrinks it', () => {
    assert.deepEqual(steps(new Backoff({ durationMs: 100, factor: 0, steps: 5 }), 3), [100, 100, 100]);
    assert.deepEqual(steps(new Backoff({ durationMs: 100, factor: 0.5, steps: 2 }), 4), [100, 50, 25, 25]);
  });

  it('caps the next delay when it would exceed the cap, and then stops stepping', () => {
    const backoff = new Backoff({ durationMs: 800, factor: 2, steps: Infinity, capMs: 30_000 });
    assert.deepEqual(steps(backoff, 8), [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });

  it('a delay reaching the cap exactly keeps its steps, and stays at the cap', () => {
    const backoff = new Backoff({ durationMs: 500, factor: 2, steps: 3, capMs: 1000 });
    assert.deepEqual(steps(backoff, 5), [500, 1000, 1000, 1000, 1000]);
  });

  it('returns a first delay above the cap as it is, then the cap', () => {
    const backoff = new Backoff({ durationMs: 5000, factor: 2, steps: 10, capMs: 1000 });
    assert.deepEqual(steps(backoff, 3), [5000, 1000, 1000]);
  });

  it('applies the cap only to a multiplied delay (factor 1 included, factor 0 not); 0 means no cap', () => {
    assert.deepEqual(
      steps(new Backoff({ durationMs: 5000, factor: 0, steps: 3, capMs: 10 }), 2),
      [5000, 5000],
    );
    assert.deepEqual(steps(new Backoff({ durationMs: 5000, factor: 1, steps: 3, capMs: 10 }), 2), [5000, 10]);
    const uncapped = new Backoff({ durationMs: 1, factor: 10, steps: 4, capMs: 0 });
    assert.deepEqual(steps(uncapped, 5), [1, 10, 100, 1000, 10_000]);
  });

  it('jitters each delay by up to jitter * delay, without feeding the jitter into the next delay', () => {
    const { random } = scripted(0.5);
    const backoff = new Backoff({ durationMs: 1000, factor: 2, steps: 3, jitter: 0.1, random });
    assert.deepEqual(steps(backoff, 5), [1050, 2100, 4200, 8400, 8400]);
  });

  it('jitters the bounds as wait.Jitter does: random 0 gives the delay, random near 1 almost (1 + jitter) times it', () => {
    const low = new Backoff({ durationMs: 800, factor: 2, steps: Infinity, jitter: 1, random: () => 0 });
    assert.deepEqual(steps(low, 2), [800, 1600]);
    const high = new Backoff({
      durationMs: 800,
      factor: 2,
      steps: Infinity,
      jitter: 1,
      random: () => 0.999999,
    });
    const [first = 0, second = 0] = steps(high, 2);
    assert.ok(first > 1599 && first < 1600, String(first));
    assert.ok(second > 3199 && second < 3200, String(second));
  });

  it('jitters a delay whose steps are used up, and a capped one', () => {
    const { random } = scripted(0.5);
    const exhausted = new Backoff({ durationMs: 100, factor: 2, steps: 0, jitter: 1, random });
    assert.deepEqual(steps(exhausted, 2), [150, 150]);
    const capped = new Backoff({ durationMs: 100, factor: 4, steps: 5, capMs: 200, jitter: 1, random });
    assert.deepEqual(steps(capped, 3), [150, 300, 300]);
  });

  it('draws one random number per step with jitter > 0, none without', () => {
    for (const jitterFactor of [undefined, 0, -1]) {
      const source = scripted(0.5);
      const options: BackoffOptions = { durationMs: 100, factor: 2, steps: 3, random: source.random };
      const backoff = new Backoff(
        jitterFactor === undefined ? options : { ...options, jitter: jitterFactor },
      );
      assert.deepEqual(steps(backoff, 4), [100, 200, 400, 800]);
      assert.equal(source.calls(), 0, `jitter ${jitterFactor}`);
    }
    const source = scripted(0);
    steps(new Backoff({ durationMs: 100, factor: 2, steps: 1, jitter: 0.5, random: source.random }), 3);
    assert.equal(source.calls(), 3);
  });

  it('jitters with Math.random by default', () => {
    const backoff = new Backoff({ durationMs: 100, factor: 1, steps: 0, jitter: 1 });
    for (const delay of steps(backoff, 20)) assert.ok(delay >= 100 && delay < 200);
  });

  it('a zero duration stays zero', () => {
    assert.deepEqual(
      steps(new Backoff({ durationMs: 0, factor: 2, steps: Infinity, capMs: 10 }), 3),
      [0, 0, 0],
    );
  });

  it('rejects settings client-go leaves undefined', () => {
    const valid: BackoffOptions = { durationMs: 100, factor: 2, steps: 3 };
    for (const invalid of [
      { durationMs: -1 },
      { durationMs: Number.NaN },
      { durationMs: Infinity },
      { factor: -2 },
      { factor: Number.NaN },
      { factor: Infinity },
      { steps: 1.5 },
      { steps: Number.NaN },
      { steps: -Infinity },
      { jitter: Number.NaN },
      { jitter: Infinity },
      { capMs: -1 },
      { capMs: Number.NaN },
    ]) {
      assert.throws(() => new Backoff({ ...valid, ...invalid }), RangeError, JSON.stringify(invalid));
    }
    assert.doesNotThrow(() => new Backoff({ ...valid, capMs: Infinity, steps: Infinity, jitter: -1 }));
  });
});

describe('BackoffManager (client-go NewExponentialBackoffManager)', () => {
  /** The reflector's parameters: 800 ms doubling to 30 s, reset after 2 min without a failure. */
  const reflector = (clock: FakeClock, random: () => number = () => 0): BackoffManager =>
    new BackoffManager({
      durationMs: 800,
      factor: 2,
      steps: Infinity,
      capMs: 30_000,
      jitter: 1,
      random,
      resetAfterMs: 120_000,
      clock,
    });

  it('grows like its Backoff while steps come close together', () => {
    const clock = new FakeClock();
    const manager = reflector(clock);
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      delays.push(manager.step());
      clock.step(30_000);
    }
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });

  it('jitters each delay', () => {
    const manager = reflector(new FakeClock(), () => 0.5);
    assert.deepEqual(steps(manager, 2), [1200, 2400]);
  });

  it('starts over after more than resetAfterMs without a step; exactly resetAfterMs is still the same streak', () => {
    const clock = new FakeClock();
    const manager = reflector(clock);
    assert.deepEqual(steps(manager, 2), [800, 1600]);
    clock.step(120_000);
    assert.equal(manager.step(), 3200);
    clock.step(120_001);
    assert.equal(manager.step(), 800);
    assert.equal(manager.step(), 1600);
  });

  it('measures the quiet period from the last step, not from the last reset: a long outage stays capped', () => {
    const clock = new FakeClock();
    const manager = reflector(clock);
    const delays: number[] = [];
    for (let elapsed = 0; elapsed < 600_000; elapsed += 30_000) {
      delays.push(manager.step());
      clock.step(30_000);
    }
    assert.deepEqual(delays.slice(6), Array<number>(delays.length - 6).fill(30_000));
  });

  it('counts the quiet period from construction for the first step', () => {
    const clock = new FakeClock();
    const manager = new BackoffManager({ durationMs: 10, factor: 2, steps: 1, resetAfterMs: 0, clock });
    assert.equal(manager.step(), 10, 'no time passed: no reset, the one step is used');
    assert.equal(manager.step(), 20);
    clock.step(1);
    assert.equal(manager.step(), 10, 'the reset restores the steps too');
    assert.equal(manager.step(), 20);
    assert.equal(manager.step(), 20);
  });

  it('rejects a negative or NaN resetAfterMs, and invalid Backoff settings', () => {
    const clock = new FakeClock();
    for (const resetAfterMs of [-1, Number.NaN]) {
      assert.throws(
        () => new BackoffManager({ durationMs: 10, factor: 2, steps: 1, resetAfterMs, clock }),
        RangeError,
      );
    }
    assert.throws(
      () => new BackoffManager({ durationMs: -10, factor: 2, steps: 1, resetAfterMs: 0, clock }),
      RangeError,
    );
  });
});
