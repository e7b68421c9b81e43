import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { scrape, valueOf } from './exposition.test-support.ts';

describe('leader election metrics', () => {
  it('reports 1 while leading and 0 otherwise, per lease', async () => {
    const { leaderElection, registry } = createMetrics({ defaultMetrics: false });
    leaderElection.setLeading('at-scheduler', false);
    leaderElection.setLeading('cloud-node', true);
    let exposition = await scrape(registry);
    assert.equal(valueOf(exposition, 'leader_election_master_status', { name: 'at-scheduler' }), 0);
    assert.equal(valueOf(exposition, 'leader_election_master_status', { name: 'cloud-node' }), 1);

    leaderElection.setLeading('at-scheduler', true);
    leaderElection.setLeading('cloud-node', false);
    exposition = await scrape(registry);
    assert.equal(valueOf(exposition, 'leader_election_master_status', { name: 'at-scheduler' }), 1);
    assert.equal(valueOf(exposition, 'leader_election_master_status', { name: 'cloud-node' }), 0);
  });

  it('exports nothing before the elector reports', async () => {
    const { registry } = createMetrics({ defaultMetrics: false });
    const family = (await scrape(registry)).families.get('leader_election_master_status');
    assert.deepEqual(family?.samples, []);
  });
});
