import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Structural copy of `WorkqueueMetricsProvider` from @loopwright/workqueue. Redeclared rather than
 * imported so metrics does not depend on workqueue; TypeScript checks compatibility at the call site.
 */
export interface WorkqueueMetricsProvider {
  newDepthMetric(name: string): { inc(): void; dec(): void };
  newDepthMetricWithPriority(name: string): { inc(priority: number): void; dec(priority: number): void };
  newAddsMetric(name: string): { inc(): void };
  newLatencyMetric(name: string): { observe(seconds: number): void };
  newWorkDurationMetric(name: string): { observe(seconds: number): void };
  newUnfinishedWorkSecondsMetric(name: string): { set(seconds: number): void };
  newLongestRunningProcessorSecondsMetric(name: string): { set(seconds: number): void };
  newRetriesMetric(name: string): { inc(): void };
}

/**
 * controller-runtime's `prometheus.ExponentialBuckets(10e-9, 10, 12)`, written out: computing them by
 * repeated multiplication yields boundaries such as 9.999999999999999e-06.
 */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = [
  1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000,
];

/**
 * controller-runtime's `maxRecommendedUniquePriorities`: a queue's first 25 distinct priorities get their
 * own `workqueue_depth` series, later ones share {@link PRIORITY_OVER_LIMIT}.
 */
export const MAX_PRIORITY_SERIES = 25;
/** The `priority` label of depth at priorities beyond {@link MAX_PRIORITY_SERIES} (controller-runtime's). */
export const PRIORITY_OVER_LIMIT = 'exceeded_cardinality_limit';

/**
 * Registers the seven `workqueue_*` families on `registry` and returns a provider that hands out one
 * series per queue. Like controller-runtime, both labels carry the queue name, and every series is
 * created (at 0) when the queue asks for it, so dashboards see a queue before its first add.
 * `workqueue_depth` also has controller-runtime's `priority` label: empty for a FIFO queue, the priority
 * for a priority queue.
 */
export function createWorkqueueMetricsProvider(registry: Registry): WorkqueueMetricsProvider {
  const labelNames = ['name', 'controller'] as const;
  const registers = [registry];
  const depth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue by workqueue and priority',
    labelNames: [...labelNames, 'priority'],
    registers,
  });
  const adds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames,
    registers,
  });
  const latency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    buckets: [...WORKQUEUE_DURATION_BUCKETS],
    labelNames,
    registers,
  });
  const workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    buckets: [...WORKQUEUE_DURATION_BUCKETS],
    labelNames,
    registers,
  });
  const unfinished = new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help:
      "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate ' +
      'at which this increases.',
    labelNames,
    registers,
  });
  const longestRunning = new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames,
    registers,
  });
  const retries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames,
    registers,
  });

  const labelsOf = (queue: string) => ({ name: queue, controller: queue });
  // Two queues with one name share their series, as with Go's WithLabelValues, so creating a series must
  // never reset it: inc(0) is safe for gauges and counters, but Histogram.zero() resets, hence the set.
  const gaugeSeries = (gauge: Gauge<'name' | 'controller'>) => (queue: string) => {
    gauge.inc(labelsOf(queue), 0);
    return gauge.labels(labelsOf(queue));
  };
  const counterSeries = (counter: Counter<'name' | 'controller'>) => (queue: string) => {
    counter.inc(labelsOf(queue), 0);
    return counter.labels(labelsOf(queue));
  };
  const histogramSeries = (histogram: Histogram<'name' | 'controller'>) => {
    const zeroed = new Set<string>();
    return (queue: string) => {
      if (!zeroed.has(queue)) {
        zeroed.add(queue);
        histogram.zero(labelsOf(queue));
      }
      return histogram.labels(labelsOf(queue));
    };
  };

  /** A depth series, created at 0 if new. */
  const depthSeries = (queue: string, priority: string) => {
    const labels = { ...labelsOf(queue), priority };
    depth.inc(labels, 0);
    return depth.labels(labels);
  };
  /**
   * Depth by priority. A priority's series stays (at 0) when its keys are gone, so a rate or a graph
   * over it has no gaps. Unlike controller-runtime, which moves every later change to the over-limit
   * series once a 26th priority shows up (leaving the others stuck at their last value), a priority
   * keeps the series it first got: every inc and its dec meet in the same series, which returns to 0.
   */
  const depthByPriority = (queue: string) => {
    type Series = ReturnType<typeof depthSeries>;
    const series = new Map<number, Series>();
    let overLimit: Series | undefined;
    const seriesOf = (priority: number): Series => {
      const known = series.get(priority);
      if (known !== undefined) return known;
      if (series.size >= MAX_PRIORITY_SERIES) return (overLimit ??= depthSeries(queue, PRIORITY_OVER_LIMIT));
      const created = depthSeries(queue, String(priority));
      series.set(priority, created);
      return created;
    };
    // The priority of every add that names none, so a queue's depth shows before its first add.
    seriesOf(0);
    return {
      inc: (priority: number) => {
        seriesOf(priority).inc();
      },
      dec: (priority: number) => {
        seriesOf(priority).dec();
      },
    };
  };

  return {
    newDepthMetric: (queue) => depthSeries(queue, ''),
    newDepthMetricWithPriority: depthByPriority,
    newAddsMetric: counterSeries(adds),
    newLatencyMetric: histogramSeries(latency),
    newWorkDurationMetric: histogramSeries(workDuration),
    newUnfinishedWorkSecondsMetric: gaugeSeries(unfinished),
    newLongestRunningProcessorSecondsMetric: gaugeSeries(longestRunning),
    newRetriesMetric: counterSeries(retries),
  };
}
