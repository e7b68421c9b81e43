import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { newRateLimitingQueue, type WorkqueueMetricsProvider } from './index.ts';

/** Records every metric call as `metric:method(value)`; creation calls as `new metric(name)`. */
function recordingProvider(): { provider: WorkqueueMetricsProvider; calls: string[]; take: () => string[] } {
  const calls: string[] = [];
  const instrument = (metric: string) => ({
    inc: () => calls.push(`${metric}:inc`),
    dec: () => calls.push(`${metric}:dec`),
    observe: (seconds: number) => calls.push(`${metric}:observe(${seconds})`),
    set: (seconds: number) => calls.push(`${metric}:set(${seconds})`),
  });
  const factory = (metric: string) => (name: string) => {
    calls.push(`new ${metric}(${name})`);
    return instrument(metric);
  };
  const provider: WorkqueueMetricsProvider = {
    newDepthMetric: factory('depth'),
    newAddsMetric: factory('adds'),
    newLatencyMetric: factory('latency'),
    newWorkDurationMetric: factory('workDuration'),
    newUnfinishedWorkSecondsMetric: factory('unfinished'),
    newLongestRunningProcessorSecondsMetric: factory('longest'),
    newRetriesMetric: factory('retries'),
  };
  return { provider, calls, take: () => calls.splice(0) };
}

/** Drops the 500 ms gauge refreshes, for tests about other metrics. */
const withoutGauges = (calls: string[]): string[] =>
  calls.filter((call) => !call.startsWith('unfinished:') && !call.startsWith('longest:'));

function setup() {
  const clock = new FakeClock();
  const recording = recordingProvider();
  const queue = newRateLimitingQueue({ name: 'pods', metricsProvider: recording.provider, clock });
  recording.take();
  return { clock, queue, ...recording };
}

describe('queue metrics', () => {
  it('creates each metric once with the queue name', () => {
    const { provider, calls } = recordingProvider();
    newRateLimitingQueue({ name: 'pods', metricsProvider: provider, clock: new FakeClock() });
    assert.deepEqual(calls, [
      'new depth(pods)',
      'new adds(pods)',
      'new latency(pods)',
      'new workDuration(pods)',
      'new unfinished(pods)',
      'new longest(pods)',
      'new retries(pods)',
    ]);
  });

  it('records nothing without a name', () => {
    const clock = new FakeClock();
    const { provider, calls } = recordingProvider();
    const queue = newRateLimitingQueue({ metricsProvider: provider, clock });
    queue.add('a');
    queue.addAfter('b', 1);
    clock.step(1000);
    assert.deepEqual(calls, []);
  });

  it('counts an add in depth and adds, but not an add of a key already waiting', () => {
    const { queue, take } = setup();
    queue.add('a');
    queue.add('a');
    queue.add('b');
    assert.deepEqual(take(), ['adds:inc', 'depth:inc', 'adds:inc', 'depth:inc']);
  });

  it('observes queue latency (add -> get) and work duration (get -> done) in seconds of the clock', async () => {
    const { clock, queue, take } = setup();
    queue.add('a');
    take();
    clock.step(250);
    assert.equal((await queue.get()).key, 'a');
    assert.deepEqual(take(), ['depth:dec', 'latency:observe(0.25)']);
    clock.step(1500);
    queue.done('a');
    assert.deepEqual(withoutGauges(take()), ['workDuration:observe(1.5)']);
  });

  it('measures latency from the first add of a dirty key', () => {
    const { clock, queue, take } = setup();
    queue.add('a');
    clock.step(100);
    queue.add('a');
    clock.step(100);
    queue.tryGet();
    assert.deepEqual(take().slice(-1), ['latency:observe(0.2)']);
  });

  it('counts an add during processing (client-go: depth includes re-dirtied processing keys)', () => {
    const { clock, queue, take } = setup();
    queue.add('a');
    queue.tryGet();
    take();
    clock.step(10);
    queue.add('a');
    assert.deepEqual(take(), ['adds:inc', 'depth:inc']);
    clock.step(30);
    queue.done('a');
    assert.deepEqual(take(), ['workDuration:observe(0.04)']);
    clock.step(60);
    queue.tryGet();
    assert.deepEqual(
      take(),
      ['depth:dec', 'latency:observe(0.09)'],
      'measured from the add, not from done()',
    );
  });

  it('counts retries on every addAfter and addRateLimited, also for a 0 delay', () => {
    const { queue, take } = setup();
    queue.addAfter('a', 10);
    queue.addAfter('b', 0);
    queue.addRateLimited('c');
    assert.deepEqual(take(), ['retries:inc', 'retries:inc', 'adds:inc', 'depth:inc', 'retries:inc']);
  });

  it('counts no retry after shutdown', () => {
    const { queue, take } = setup();
    queue.shutDown();
    queue.addAfter('a', 10);
    assert.deepEqual(take(), []);
  });

  it("refreshes unfinished work and longest running processor every 500 ms on one unref'd timer", () => {
    const { clock, queue, take } = setup();
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.pendingTimers({ includeUnref: false }), 0);
    clock.step(500);
    assert.deepEqual(take(), ['unfinished:set(0)', 'longest:set(0)']);

    queue.add('a');
    queue.tryGet();
    clock.step(250);
    queue.add('b');
    queue.tryGet();
    take();
    clock.step(250);
    assert.deepEqual(take(), ['unfinished:set(0.75)', 'longest:set(0.5)']);

    queue.done('a');
    queue.done('b');
    take();
    clock.step(500);
    assert.deepEqual(take(), ['unfinished:set(0)', 'longest:set(0)']);
  });

  it('stops refreshing on shutdown', () => {
    const { clock, queue, take } = setup();
    queue.shutDown();
    assert.equal(clock.pendingTimers(), 0);
    clock.step(5000);
    assert.deepEqual(take(), []);
  });
});
