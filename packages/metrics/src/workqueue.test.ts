import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { MAX_PRIORITY_SERIES, PRIORITY_OVER_LIMIT } from './workqueue.ts';
import { bucketsOf, scrape, valueOf } from './exposition.test-support.ts';

// Verbatim copy of the interface in @loopwright/workqueue: the assignment below fails to compile if the
// provider drifts from it.
interface WorkqueueMetricsProvider {
  newDepthMetric(name: string): { inc(): void; dec(): void };
  newDepthMetricWithPriority?(name: string): { inc(priority: number): void; dec(priority: number): void };
  newAddsMetric(name: string): { inc(): void };
  newLatencyMetric(name: string): { observe(seconds: number): void };
  newWorkDurationMetric(name: string): { observe(seconds: number): void };
  newUnfinishedWorkSecondsMetric(name: string): { set(seconds: number): void };
  newLongestRunningProcessorSecondsMetric(name: string): { set(seconds: number): void };
  newRetriesMetric(name: string): { inc(): void };
}

function setup() {
  const metrics = createMetrics({ defaultMetrics: false });
  const provider: WorkqueueMetricsProvider = metrics.workqueueProvider;
  return {
    provider,
    depthByPriority: (name: string) => metrics.workqueueProvider.newDepthMetricWithPriority(name),
    scrapeNow: () => scrape(metrics.registry),
  };
}

const queue = (name: string) => ({ name, controller: name });
/** The depth series of a queue: FIFO queues have the empty priority, as in controller-runtime. */
const depthOf = (name: string, priority = '') => ({ ...queue(name), priority });

describe('workqueueProvider', () => {
  it('exports every series of a queue at 0 as soon as the queue asks for it', async () => {
    const { provider, scrapeNow } = setup();
    provider.newDepthMetric('q');
    provider.newAddsMetric('q');
    provider.newRetriesMetric('q');
    provider.newLatencyMetric('q');
    provider.newWorkDurationMetric('q');
    provider.newUnfinishedWorkSecondsMetric('q');
    provider.newLongestRunningProcessorSecondsMetric('q');
    const exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q')), 0);
    for (const name of [
      'workqueue_adds_total',
      'workqueue_retries_total',
      'workqueue_queue_duration_seconds_count',
      'workqueue_queue_duration_seconds_sum',
      'workqueue_work_duration_seconds_count',
      'workqueue_work_duration_seconds_sum',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
    ]) {
      assert.equal(valueOf(exposition, name, queue('q')), 0, name);
    }
  });

  it('moves the depth gauge up and down', async () => {
    const { provider, scrapeNow } = setup();
    const depth = provider.newDepthMetric('q');
    depth.inc();
    depth.inc();
    depth.inc();
    depth.dec();
    assert.equal(valueOf(await scrapeNow(), 'workqueue_depth', depthOf('q')), 2);
  });

  it('tracks depth by priority, each priority in its own series, which returns to 0 and stays', async () => {
    const { depthByPriority, scrapeNow } = setup();
    const depth = depthByPriority('q');
    depth.inc(-100);
    depth.inc(-100);
    depth.inc(5);
    depth.dec(-100);
    let exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '-100')), 1, 'counts, not amounts');
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '5')), 1);
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '0')), 0, 'the default priority, at 0');
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q')), undefined, 'no empty priority');

    depth.dec(-100);
    depth.dec(5);
    exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '-100')), 0);
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '5')), 0);
  });

  it(`gives a queue's first ${MAX_PRIORITY_SERIES} priorities their own series, later ones share "${PRIORITY_OVER_LIMIT}"`, async () => {
    const { depthByPriority, scrapeNow } = setup();
    const depth = depthByPriority('q');
    // 0 is the first priority (created with the metric), then 1..24; 25 and 26 are over the limit.
    for (let priority = 1; priority <= MAX_PRIORITY_SERIES + 1; priority++) depth.inc(priority);
    depth.inc(0);
    depth.inc(24);
    let exposition = await scrapeNow();
    assert.equal(
      valueOf(exposition, 'workqueue_depth', depthOf('q', '0')),
      1,
      'an early priority keeps its series',
    );
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '24')), 2);
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '25')), undefined);
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', PRIORITY_OVER_LIMIT)), 2);
    const series = exposition.samples.filter((sample) => sample.name === 'workqueue_depth');
    assert.equal(series.length, MAX_PRIORITY_SERIES + 1);

    depth.dec(25);
    depth.dec(26);
    depth.dec(24);
    exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', PRIORITY_OVER_LIMIT)), 0);
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '24')), 1);
  });

  it('counts the limit per queue', async () => {
    const { depthByPriority, scrapeNow } = setup();
    const a = depthByPriority('a');
    for (let priority = 1; priority <= MAX_PRIORITY_SERIES; priority++) a.inc(priority);
    depthByPriority('b').inc(MAX_PRIORITY_SERIES);
    const exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('a', PRIORITY_OVER_LIMIT)), 1);
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('b', String(MAX_PRIORITY_SERIES))), 1);
  });

  it('counts adds and retries separately', async () => {
    const { provider, scrapeNow } = setup();
    const adds = provider.newAddsMetric('q');
    const retries = provider.newRetriesMetric('q');
    adds.inc();
    adds.inc();
    retries.inc();
    const exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_adds_total', queue('q')), 2);
    assert.equal(valueOf(exposition, 'workqueue_retries_total', queue('q')), 1);
  });

  it('observes queue and work durations into their own histograms, bucket bounds inclusive', async () => {
    const { provider, scrapeNow } = setup();
    provider.newLatencyMetric('q').observe(1e-8);
    provider.newLatencyMetric('q').observe(0.5);
    provider.newWorkDurationMetric('q').observe(2000);
    const exposition = await scrapeNow();

    const latency = new Map(bucketsOf(exposition, 'workqueue_queue_duration_seconds', queue('q')));
    assert.equal(latency.get(1e-8), 1);
    assert.equal(latency.get(0.1), 1);
    assert.equal(latency.get(1), 2);
    assert.equal(latency.get(Infinity), 2);
    assert.equal(valueOf(exposition, 'workqueue_queue_duration_seconds_sum', queue('q')), 0.5 + 1e-8);

    const work = new Map(bucketsOf(exposition, 'workqueue_work_duration_seconds', queue('q')));
    assert.equal(work.get(1000), 0, 'above the largest bucket');
    assert.equal(work.get(Infinity), 1);
    assert.equal(valueOf(exposition, 'workqueue_work_duration_seconds_count', queue('q')), 1);
  });

  it('sets the stuck-work gauges to the latest value', async () => {
    const { provider, scrapeNow } = setup();
    const unfinished = provider.newUnfinishedWorkSecondsMetric('q');
    const longest = provider.newLongestRunningProcessorSecondsMetric('q');
    unfinished.set(12.5);
    unfinished.set(3);
    longest.set(7);
    const exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_unfinished_work_seconds', queue('q')), 3);
    assert.equal(valueOf(exposition, 'workqueue_longest_running_processor_seconds', queue('q')), 7);
  });

  it('keeps queues apart', async () => {
    const { provider, scrapeNow } = setup();
    provider.newAddsMetric('a').inc();
    provider.newAddsMetric('b');
    const exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_adds_total', queue('a')), 1);
    assert.equal(valueOf(exposition, 'workqueue_adds_total', queue('b')), 0);
  });

  it('never resets a series when a second queue with the same name asks for it', async () => {
    const { provider, depthByPriority, scrapeNow } = setup();
    provider.newDepthMetric('q').inc();
    provider.newAddsMetric('q').inc();
    provider.newLatencyMetric('q').observe(0.5);
    provider.newWorkDurationMetric('q').observe(0.5);
    provider.newUnfinishedWorkSecondsMetric('q').set(4);

    provider.newDepthMetric('q');
    depthByPriority('q').inc(-100);
    depthByPriority('q');
    provider.newAddsMetric('q');
    provider.newLatencyMetric('q');
    provider.newWorkDurationMetric('q');
    provider.newUnfinishedWorkSecondsMetric('q');
    const exposition = await scrapeNow();
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q')), 1);
    assert.equal(valueOf(exposition, 'workqueue_depth', depthOf('q', '-100')), 1);
    assert.equal(valueOf(exposition, 'workqueue_adds_total', queue('q')), 1);
    assert.equal(valueOf(exposition, 'workqueue_queue_duration_seconds_count', queue('q')), 1);
    assert.equal(valueOf(exposition, 'workqueue_work_duration_seconds_count', queue('q')), 1);
    assert.equal(valueOf(exposition, 'workqueue_unfinished_work_seconds', queue('q')), 4);
  });
});
