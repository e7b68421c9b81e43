import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { LOW_PRIORITY, newRateLimitingQueue, type Ordering, type WorkqueueMetricsProvider } from './index.ts';

/**
 * Records every metric call as `metric:method(value)` (`depth:inc` without an argument); creation calls as
 * `new metric(name)`. With `byPriority` the provider also creates depth by priority (`depthByPriority`).
 */
function recordingProvider({ byPriority = false } = {}): {
  provider: WorkqueueMetricsProvider;
  calls: string[];
  take: () => string[];
} {
  const calls: string[] = [];
  const withArgument = (args: unknown[]) => (args.length === 0 ? '' : `(${args.join(', ')})`);
  const instrument = (metric: string) => ({
    inc: (...args: unknown[]) => calls.push(`${metric}:inc${withArgument(args)}`),
    dec: (...args: unknown[]) => calls.push(`${metric}:dec${withArgument(args)}`),
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
    ...(byPriority && { newDepthMetricWithPriority: factory('depthByPriority') }),
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
  it('takes a discarded key out of depth, and observes no latency for it', () => {
    const { clock, queue, take } = setup();
    queue.add('a');
    queue.add('b');
    queue.addAfter('c', 10);
    take();
    queue.discard((key) => key !== 'b');
    assert.deepEqual(withoutGauges(take()), ['depth:dec']);
    clock.step(3);
    queue.add('a'); // its latency counts from this add, not from the discarded one
    clock.step(2);
    queue.tryGet();
    queue.tryGet();
    assert.deepEqual(withoutGauges(take()), [
      'adds:inc',
      'depth:inc',
      'depth:dec',
      'latency:observe(0.005)',
      'depth:dec',
      'latency:observe(0.002)',
    ]);
  });
});

describe('queue metrics: depth by priority', () => {
  function prioritySetup(ordering: Ordering = 'priority') {
    const clock = new FakeClock();
    const recording = recordingProvider({ byPriority: true });
    const queue = newRateLimitingQueue({
      name: 'pods',
      metricsProvider: recording.provider,
      clock,
      ordering,
    });
    return { clock, queue, ...recording };
  }

  it('a priority queue creates depth by priority instead of the plain depth', () => {
    const { take } = prioritySetup();
    assert.deepEqual(take().slice(0, 2), ['new depthByPriority(pods)', 'new adds(pods)']);
  });

  it('counts an add at its priority and the hand-out at the priority handed out', () => {
    const { queue, take } = prioritySetup();
    take();
    queue.add('a', LOW_PRIORITY);
    queue.add('b');
    assert.deepEqual(take(), ['adds:inc', 'depthByPriority:inc(-100)', 'adds:inc', 'depthByPriority:inc(0)']);
    queue.tryGet();
    queue.tryGet();
    assert.deepEqual(withoutGauges(take()), [
      'depthByPriority:dec(0)',
      'latency:observe(0)',
      'depthByPriority:dec(-100)',
      'latency:observe(0)',
    ]);
  });

  it('moves a raised waiting key from its old priority to the new one, without counting an add', () => {
    const { queue, take } = prioritySetup();
    queue.add('a', LOW_PRIORITY);
    take();
    queue.add('a', 5);
    queue.add('a', 1);
    queue.add('a', 5);
    assert.deepEqual(take(), ['depthByPriority:dec(-100)', 'depthByPriority:inc(5)']);
    queue.tryGet();
    assert.deepEqual(take().slice(0, 1), ['depthByPriority:dec(5)']);
  });

  it('moves a key raised during processing too: it counts in depth from its add, as in client-go', () => {
    const { queue, take } = prioritySetup();
    queue.add('a');
    queue.tryGet();
    take();
    queue.add('a', LOW_PRIORITY);
    queue.add('a', 2);
    assert.deepEqual(take(), [
      'adds:inc',
      'depthByPriority:inc(-100)',
      'depthByPriority:dec(-100)',
      'depthByPriority:inc(2)',
    ]);
    queue.done('a');
    queue.tryGet();
    assert.deepEqual(
      withoutGauges(take()).filter((call) => call.startsWith('depth')),
      ['depthByPriority:dec(2)'],
    );
  });

  it('counts a delayed key at its priority when its delay ends', () => {
    const { clock, queue, take } = prioritySetup();
    queue.addAfter('a', 10, 3);
    assert.deepEqual(take().slice(-1), ['retries:inc']);
    clock.step(10);
    assert.deepEqual(take(), ['adds:inc', 'depthByPriority:inc(3)']);
  });

  it('a FIFO queue keeps the plain depth, called without priorities, and records no raise', () => {
    const { queue, take } = prioritySetup('fifo');
    assert.deepEqual(take()[0], 'new depth(pods)');
    queue.add('a', LOW_PRIORITY);
    queue.add('a', 5);
    queue.tryGet();
    assert.deepEqual(withoutGauges(take()), ['adds:inc', 'depth:inc', 'depth:dec', 'latency:observe(0)']);
  });

  it('a priority queue falls back to the plain depth, without priorities, when the provider has no depth by priority', () => {
    const clock = new FakeClock();
    const { provider, take } = recordingProvider();
    const queue = newRateLimitingQueue({
      name: 'pods',
      metricsProvider: provider,
      clock,
      ordering: 'priority',
    });
    assert.deepEqual(take()[0], 'new depth(pods)');
    // prom-client's inc(value) would take a priority for the amount: the depth must see no argument.
    queue.add('a', LOW_PRIORITY);
    queue.add('a', 5);
    queue.tryGet();
    assert.deepEqual(withoutGauges(take()), ['adds:inc', 'depth:inc', 'depth:dec', 'latency:observe(0)']);
  });
});
