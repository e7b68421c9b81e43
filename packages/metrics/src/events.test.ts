import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { scrape, valueOf } from './exposition.test-support.ts';

describe('event metrics', () => {
  it('counts dropped Events by cause, every cause exported from the start', async () => {
    const { events, registry } = createMetrics({ defaultMetrics: false });
    let exposition = await scrape(registry);
    for (const cause of ['spam-filter', 'queue-full', 'closed', 'invalid'])
      assert.equal(valueOf(exposition, 'loopwright_events_dropped_total', { cause }), 0, cause);
    events.dropped('queue-full');
    events.dropped('queue-full');
    events.dropped('spam-filter');
    exposition = await scrape(registry);
    assert.equal(valueOf(exposition, 'loopwright_events_dropped_total', { cause: 'queue-full' }), 2);
    assert.equal(valueOf(exposition, 'loopwright_events_dropped_total', { cause: 'spam-filter' }), 1);
    assert.equal(valueOf(exposition, 'loopwright_events_dropped_total', { cause: 'closed' }), 0);
  });
});
