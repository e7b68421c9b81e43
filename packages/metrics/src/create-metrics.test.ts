import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { register as globalRegistry } from 'prom-client';
import { createMetrics, type Metrics } from './create-metrics.ts';
import { bucketsOf, scrape } from './exposition.test-support.ts';

// Written out independently of the source: these are the names, help texts, label sets and buckets that
// controller-runtime / client-go export, which existing dashboards and alerts query.
const WORKQUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000];
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
const REST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

interface Expected {
  type: 'counter' | 'gauge' | 'histogram';
  help: string;
  labels: string[];
  buckets?: number[];
}

const EXPECTED: Record<string, Expected> = {
  workqueue_depth: {
    type: 'gauge',
    help: 'Current depth of workqueue by workqueue and priority',
    labels: ['controller', 'name', 'priority'],
  },
  workqueue_adds_total: {
    type: 'counter',
    help: 'Total number of adds handled by workqueue',
    labels: ['controller', 'name'],
  },
  workqueue_retries_total: {
    type: 'counter',
    help: 'Total number of retries handled by workqueue',
    labels: ['controller', 'name'],
  },
  workqueue_queue_duration_seconds: {
    type: 'histogram',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labels: ['controller', 'name'],
    buckets: WORKQUEUE_BUCKETS,
  },
  workqueue_work_duration_seconds: {
    type: 'histogram',
    help: 'How long in seconds processing an item from workqueue takes.',
    labels: ['controller', 'name'],
    buckets: WORKQUEUE_BUCKETS,
  },
  workqueue_unfinished_work_seconds: {
    type: 'gauge',
    help:
      "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large " +
      'values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this ' +
      'increases.',
    labels: ['controller', 'name'],
  },
  workqueue_longest_running_processor_seconds: {
    type: 'gauge',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labels: ['controller', 'name'],
  },
  controller_runtime_reconcile_total: {
    type: 'counter',
    help: 'Total number of reconciliations per controller',
    labels: ['controller', 'result'],
  },
  controller_runtime_reconcile_errors_total: {
    type: 'counter',
    help: 'Total number of reconciliation errors per controller',
    labels: ['controller'],
  },
  controller_runtime_terminal_reconcile_errors_total: {
    type: 'counter',
    help: 'Total number of terminal reconciliation errors per controller',
    labels: ['controller'],
  },
  controller_runtime_reconcile_panics_total: {
    type: 'counter',
    help: 'Total number of reconciliation panics per controller',
    labels: ['controller'],
  },
  controller_runtime_reconcile_timeouts_total: {
    type: 'counter',
    help: 'Total number of reconciliation timeouts per controller',
    labels: ['controller'],
  },
  controller_runtime_reconcile_time_seconds: {
    type: 'histogram',
    help: 'Length of time per reconciliation per controller',
    labels: ['controller'],
    buckets: RECONCILE_BUCKETS,
  },
  controller_runtime_max_concurrent_reconciles: {
    type: 'gauge',
    help: 'Maximum number of concurrent reconciles per controller',
    labels: ['controller'],
  },
  controller_runtime_active_workers: {
    type: 'gauge',
    help: 'Number of currently used workers per controller',
    labels: ['controller'],
  },
  leader_election_master_status: {
    type: 'gauge',
    help:
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' " +
      'is the string used to identify the lease. Please make sure to group by name.',
    labels: ['name'],
  },
  loopwright_shard_members: {
    type: 'gauge',
    help: "Live members of this controller's shard ring, as this replica last read it.",
    labels: ['controller'],
  },
  loopwright_shard_owned_fraction: {
    type: 'gauge',
    help: 'Share of the hash space (0 to 1) whose objects this replica reconciles.',
    labels: ['controller'],
  },
  loopwright_shard_handoffs_total: {
    type: 'counter',
    help: 'Hand-offs of hash ranges between replicas, by result: taken, released, conflict (a claim another replica also made, dropped), failed (retried).',
    labels: ['controller', 'result'],
  },
  loopwright_shard_handoff_duration_seconds: {
    type: 'histogram',
    help: 'How long a hand-off that moved ranges took: a release from the start of its drain, a take from its claim to its confirmation.',
    labels: ['controller'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  },
  rest_client_requests_total: {
    type: 'counter',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labels: ['code', 'host', 'method'],
  },
  rest_client_request_duration_seconds: {
    type: 'histogram',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labels: ['host', 'verb'],
    buckets: REST_BUCKETS,
  },
  loopwright_informer_watch_errors_total: {
    type: 'counter',
    help: 'Total number of failed list or watch requests per informer resource, by reason.',
    labels: ['reason', 'resource'],
  },
  loopwright_informer_relists_total: {
    type: 'counter',
    help: 'Total number of full lists after the initial one per informer resource.',
    labels: ['resource'],
  },
  loopwright_events_dropped_total: {
    type: 'counter',
    help: 'Events not recorded, by cause: spam-filter (per-object limit), queue-full (writes waiting behind reconciles), closed (after shutdown), invalid.',
    labels: ['cause'],
  },
};

/** Gives every family at least one series, so its labels and buckets show in the exposition. */
function exerciseEveryFamily(metrics: Metrics): void {
  const provider = metrics.workqueueProvider;
  provider.newDepthMetric('q').inc();
  provider.newAddsMetric('q').inc();
  provider.newRetriesMetric('q').inc();
  provider.newLatencyMetric('q').observe(0.001);
  provider.newWorkDurationMetric('q').observe(0.002);
  provider.newUnfinishedWorkSecondsMetric('q').set(1);
  provider.newLongestRunningProcessorSecondsMetric('q').set(1);
  const reconcile = metrics.reconcile.forController('c', 1);
  reconcile.reconcileStarted();
  reconcile.reconcileFinished('success', 0.1);
  metrics.leaderElection.setLeading('lease', true);
  metrics.restClient.observeRequest({
    method: 'GET',
    host: 'api:6443',
    statusCode: 200,
    durationSeconds: 0.01,
  });
  metrics.informer.forResource('pods').relisted();
  metrics.sharding.setMembers('at-scheduler', 2);
  metrics.sharding.setOwnedFraction('at-scheduler', 0.5);
  metrics.sharding.observeHandoff('at-scheduler', 'taken', 128, 0.02);
}

describe('createMetrics', () => {
  it('exports every standard family with its exact name, type, help, labels and buckets', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    exerciseEveryFamily(metrics);
    const exposition = await scrape(metrics.registry);

    assert.deepEqual([...exposition.families.keys()].sort(), Object.keys(EXPECTED).sort());
    for (const [name, expected] of Object.entries(EXPECTED)) {
      const family = exposition.families.get(name);
      assert.ok(family, name);
      assert.equal(family.type, expected.type, `${name} type`);
      assert.equal(family.help, expected.help, `${name} help`);
      assert.ok(family.samples.length > 0, `${name} has a series`);
      for (const sample of family.samples) {
        const labelNames = Object.keys(sample.labels)
          .filter((label) => label !== 'le')
          .sort();
        assert.deepEqual(labelNames, expected.labels, `${sample.name} labels`);
      }
      if (expected.buckets !== undefined) {
        const seriesLabels = Object.fromEntries(
          Object.entries(family.samples[0]?.labels ?? {}).filter(([label]) => label !== 'le'),
        );
        const bounds = bucketsOf(exposition, name, seriesLabels).map(([bound]) => bound);
        assert.deepEqual(bounds, [...expected.buckets, Infinity], `${name} buckets`);
      }
    }
  });

  it('labels workqueue series with the queue name twice, as controller-runtime does', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.workqueueProvider.newDepthMetric('at-scheduler');
    const exposition = await scrape(metrics.registry);
    assert.deepEqual(exposition.families.get('workqueue_depth')?.samples[0]?.labels, {
      name: 'at-scheduler',
      controller: 'at-scheduler',
      priority: '',
    });
  });

  it('adds the process and Node.js defaults, without the gauges that promtool rejects', async () => {
    const { registry } = createMetrics();
    const families = (await scrape(registry)).families;
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_gc_duration_seconds',
      'nodejs_heap_used_after_gc_bytes',
      'nodejs_active_handles',
    ]) {
      assert.ok(families.has(name), `${name} exported`);
    }
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ]) {
      assert.equal(families.has(name), false, `${name} is a gauge named like a counter`);
    }
  });

  it('leaves out the defaults when asked to', async () => {
    const { registry } = createMetrics({ defaultMetrics: false });
    const names = [...(await scrape(registry)).families.keys()];
    assert.deepEqual(
      names.filter((name) => name.startsWith('process_') || name.startsWith('nodejs_')),
      [],
    );
  });

  it("never registers on prom-client's global registry, and instances do not collide", async () => {
    const first = createMetrics();
    const second = createMetrics({ defaultMetrics: false });
    exerciseEveryFamily(first);
    exerciseEveryFamily(second);
    assert.deepEqual(await globalRegistry.getMetricsAsJSON(), []);
    assert.notEqual(first.registry, second.registry);
  });
});
