import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { scrape, valueOf } from './exposition.test-support.ts';
import { SHARD_HANDOFF_RESULTS } from './sharding.ts';

describe('sharding metrics', () => {
  it('reports members and the owned fraction per controller', async () => {
    const { sharding, registry } = createMetrics({ defaultMetrics: false });
    sharding.setMembers('at-scheduler', 3);
    sharding.setOwnedFraction('at-scheduler', 85 / 256);
    sharding.setMembers('mailgun-cluster', 1);
    const exposition = await scrape(registry);
    assert.equal(valueOf(exposition, 'loopwright_shard_members', { controller: 'at-scheduler' }), 3);
    assert.equal(valueOf(exposition, 'loopwright_shard_members', { controller: 'mailgun-cluster' }), 1);
    assert.equal(
      valueOf(exposition, 'loopwright_shard_owned_fraction', { controller: 'at-scheduler' }),
      85 / 256,
    );
  });

  it('exports every hand-off result at 0 from the first report, then counts each', async () => {
    const { sharding, registry } = createMetrics({ defaultMetrics: false });
    assert.deepEqual((await scrape(registry)).families.get('loopwright_shard_handoffs_total')?.samples, []);
    sharding.setMembers('at-scheduler', 2);
    let exposition = await scrape(registry);
    for (const result of SHARD_HANDOFF_RESULTS) {
      assert.equal(
        valueOf(exposition, 'loopwright_shard_handoffs_total', { controller: 'at-scheduler', result }),
        0,
      );
    }
    sharding.observeHandoff('at-scheduler', 'conflict', 3, 0.2);
    sharding.observeHandoff('at-scheduler', 'taken', 40, 0.03);
    sharding.observeHandoff('at-scheduler', 'taken', 2, 0.02);
    exposition = await scrape(registry);
    const count = (result: string): number | undefined =>
      valueOf(exposition, 'loopwright_shard_handoffs_total', { controller: 'at-scheduler', result });
    assert.deepEqual(SHARD_HANDOFF_RESULTS.map(count), [2, 0, 1, 0]);
  });

  it('times only the hand-offs that moved ranges', async () => {
    const { sharding, registry } = createMetrics({ defaultMetrics: false });
    sharding.observeHandoff('at-scheduler', 'released', 10, 1.5);
    sharding.observeHandoff('at-scheduler', 'taken', 10, 0.04);
    sharding.observeHandoff('at-scheduler', 'failed', 10, 9);
    sharding.observeHandoff('at-scheduler', 'conflict', 1, 9);
    sharding.observeHandoff('at-scheduler', 'taken', 0, 9);
    const exposition = await scrape(registry);
    const series = { controller: 'at-scheduler' };
    assert.equal(valueOf(exposition, 'loopwright_shard_handoff_duration_seconds_count', series), 2);
    assert.equal(valueOf(exposition, 'loopwright_shard_handoff_duration_seconds_sum', series), 1.54);
    assert.equal(
      valueOf(exposition, 'loopwright_shard_handoff_duration_seconds_bucket', { ...series, le: '0.05' }),
      1,
    );
  });
});
