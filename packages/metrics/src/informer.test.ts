import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { scrape, valueOf } from './exposition.test-support.ts';
import { INFORMER_WATCH_ERROR_REASONS } from './informer.ts';

describe('informer metrics', () => {
  it('creates the series of a resource at 0 so rate() and alerts work before the first error', async () => {
    const { informer, registry } = createMetrics({ defaultMetrics: false });
    informer.forResource('pods');
    const exposition = await scrape(registry);
    assert.equal(valueOf(exposition, 'loopwright_informer_relists_total', { resource: 'pods' }), 0);
    const reasons = exposition.families
      .get('loopwright_informer_watch_errors_total')
      ?.samples.filter((sample) => sample.value === 0 && sample.labels.resource === 'pods')
      .map((sample) => sample.labels.reason);
    assert.deepEqual(reasons, [
      'expired',
      'timeout',
      'network',
      'throttled',
      'server_error',
      'client_error',
      'other',
    ]);
    assert.deepEqual(reasons, [...INFORMER_WATCH_ERROR_REASONS]);
  });

  it('counts watch errors by reason and relists, per resource, without resetting on re-registration', async () => {
    const { informer, registry } = createMetrics({ defaultMetrics: false });
    const pods = informer.forResource('pods');
    const leases = informer.forResource('leases.coordination.k8s.io');
    pods.watchError('expired');
    pods.relisted();
    pods.watchError('network');
    pods.watchError('network');
    leases.watchError('client_error');
    informer.forResource('pods');
    const exposition = await scrape(registry);
    const errors = (resource: string, reason: string) =>
      valueOf(exposition, 'loopwright_informer_watch_errors_total', { resource, reason });
    assert.equal(errors('pods', 'expired'), 1);
    assert.equal(errors('pods', 'network'), 2);
    assert.equal(errors('pods', 'client_error'), 0);
    assert.equal(errors('leases.coordination.k8s.io', 'client_error'), 1);
    assert.equal(valueOf(exposition, 'loopwright_informer_relists_total', { resource: 'pods' }), 1);
    assert.equal(
      valueOf(exposition, 'loopwright_informer_relists_total', { resource: 'leases.coordination.k8s.io' }),
      0,
    );
  });
});
