import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { bucketsOf, scrape, valueOf, type Exposition } from './exposition.test-support.ts';
import type { ReconcileOutcome } from './reconcile.ts';

function setup() {
  const metrics = createMetrics({ defaultMetrics: false });
  return { reconcile: metrics.reconcile, scrapeNow: () => scrape(metrics.registry) };
}

/** The counters of one controller, as a dashboard reads them. */
function countersOf(exposition: Exposition, controller: string) {
  const total = (result: string) =>
    valueOf(exposition, 'controller_runtime_reconcile_total', { controller, result });
  return {
    success: total('success'),
    error: total('error'),
    requeue: total('requeue'),
    requeue_after: total('requeue_after'),
    errors: valueOf(exposition, 'controller_runtime_reconcile_errors_total', { controller }),
    terminal: valueOf(exposition, 'controller_runtime_terminal_reconcile_errors_total', { controller }),
    panics: valueOf(exposition, 'controller_runtime_reconcile_panics_total', { controller }),
    timeouts: valueOf(exposition, 'controller_runtime_reconcile_timeouts_total', { controller }),
  };
}

const ZERO = {
  success: 0,
  error: 0,
  requeue: 0,
  requeue_after: 0,
  errors: 0,
  terminal: 0,
  panics: 0,
  timeouts: 0,
};

describe('reconcile metrics', () => {
  it('pre-initialises a controller like controller-runtime: every result at 0, workers set', async () => {
    const { reconcile, scrapeNow } = setup();
    reconcile.forController('at', 4);
    const exposition = await scrapeNow();
    assert.deepEqual(countersOf(exposition, 'at'), ZERO);
    assert.equal(
      valueOf(exposition, 'controller_runtime_max_concurrent_reconciles', { controller: 'at' }),
      4,
    );
    assert.equal(valueOf(exposition, 'controller_runtime_active_workers', { controller: 'at' }), 0);
    assert.equal(
      valueOf(exposition, 'controller_runtime_reconcile_time_seconds_count', { controller: 'at' }),
      undefined,
      'the duration histogram appears with the first reconcile',
    );
  });

  const cases: [ReconcileOutcome, Partial<typeof ZERO>][] = [
    ['success', { success: 1 }],
    ['requeue', { requeue: 1 }],
    ['requeue_after', { requeue_after: 1 }],
    ['error', { error: 1, errors: 1 }],
    ['terminal_error', { error: 1, errors: 1, terminal: 1 }],
    ['panic', { error: 1, errors: 1, panics: 1 }],
  ];
  for (const [outcome, expected] of cases) {
    it(`counts a reconcile that ended with ${outcome}`, async () => {
      const { reconcile, scrapeNow } = setup();
      const controller = reconcile.forController('at', 1);
      controller.reconcileStarted();
      controller.reconcileFinished(outcome, 0.2);
      const exposition = await scrapeNow();
      assert.deepEqual(countersOf(exposition, 'at'), { ...ZERO, ...expected });
      assert.equal(
        valueOf(exposition, 'controller_runtime_reconcile_time_seconds_count', { controller: 'at' }),
        1,
      );
    });
  }

  it('counts a timeout when it passes, apart from how the reconcile ends', async () => {
    const { reconcile, scrapeNow } = setup();
    const controller = reconcile.forController('at', 2);
    controller.reconcileStarted();
    controller.reconcileTimedOut();
    assert.deepEqual(countersOf(await scrapeNow(), 'at'), { ...ZERO, timeouts: 1 }, 'still running');
    assert.equal(valueOf(await scrapeNow(), 'controller_runtime_active_workers', { controller: 'at' }), 1);
    controller.reconcileFinished('error', 31);
    assert.deepEqual(countersOf(await scrapeNow(), 'at'), { ...ZERO, timeouts: 1, error: 1, errors: 1 });
  });

  it('tracks active workers between start and finish', async () => {
    const { reconcile, scrapeNow } = setup();
    const controller = reconcile.forController('at', 3);
    controller.reconcileStarted();
    controller.reconcileStarted();
    assert.equal(valueOf(await scrapeNow(), 'controller_runtime_active_workers', { controller: 'at' }), 2);
    controller.reconcileFinished('error', 0.1);
    assert.equal(valueOf(await scrapeNow(), 'controller_runtime_active_workers', { controller: 'at' }), 1);
  });

  it('observes durations into the controller-runtime buckets', async () => {
    const { reconcile, scrapeNow } = setup();
    const controller = reconcile.forController('at', 1);
    for (const seconds of [0.004, 0.3, 0.31, 75]) {
      controller.reconcileStarted();
      controller.reconcileFinished('success', seconds);
    }
    const exposition = await scrapeNow();
    const buckets = new Map(
      bucketsOf(exposition, 'controller_runtime_reconcile_time_seconds', { controller: 'at' }),
    );
    assert.equal(buckets.get(0.005), 1);
    assert.equal(buckets.get(0.3), 2);
    assert.equal(buckets.get(0.35), 3);
    assert.equal(buckets.get(60), 3);
    assert.equal(buckets.get(Infinity), 4);
    assert.equal(
      valueOf(exposition, 'controller_runtime_reconcile_time_seconds_sum', { controller: 'at' }),
      75.614,
    );
  });

  it('keeps counters and busy workers when a controller is registered again', async () => {
    const { reconcile, scrapeNow } = setup();
    const first = reconcile.forController('at', 1);
    first.reconcileStarted();
    first.reconcileFinished('error', 0.1);
    first.reconcileStarted();
    reconcile.forController('at', 5);
    const exposition = await scrapeNow();
    assert.deepEqual(countersOf(exposition, 'at'), { ...ZERO, error: 1, errors: 1 });
    assert.equal(valueOf(exposition, 'controller_runtime_active_workers', { controller: 'at' }), 1);
    assert.equal(
      valueOf(exposition, 'controller_runtime_max_concurrent_reconciles', { controller: 'at' }),
      5,
    );
  });

  it('keeps controllers apart', async () => {
    const { reconcile, scrapeNow } = setup();
    const a = reconcile.forController('a', 1);
    reconcile.forController('b', 2);
    a.reconcileStarted();
    a.reconcileFinished('success', 0.1);
    const exposition = await scrapeNow();
    assert.deepEqual(countersOf(exposition, 'a'), { ...ZERO, success: 1 });
    assert.deepEqual(countersOf(exposition, 'b'), ZERO);
  });
});
