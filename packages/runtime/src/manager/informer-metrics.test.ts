import { createMetrics } from '@loopwright/metrics';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { informerMetricsHook } from './informer-metrics.ts';

async function series(metrics: ReturnType<typeof createMetrics>, name: string): Promise<string[]> {
  const metric = metrics.registry.getSingleMetric(name);
  const { values } = (await metric?.get()) ?? { values: [] };
  return values.map(({ labels, value }) => `${JSON.stringify(labels)} ${value}`).sort();
}

describe('informerMetricsHook', () => {
  it("an informer's series exist at zero from its start, before any failure", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const hook = informerMetricsHook(metrics.informer);
    assert.deepEqual(await series(metrics, 'loopwright_informer_relists_total'), []);
    hook.started?.('leases.coordination.k8s.io');
    assert.deepEqual(await series(metrics, 'loopwright_informer_relists_total'), [
      '{"resource":"leases.coordination.k8s.io"} 0',
    ]);
    const errors = await series(metrics, 'loopwright_informer_watch_errors_total');
    assert.ok(errors.length > 0 && errors.every((line) => line.endsWith(' 0')), errors.join('\n'));
    assert.ok(errors.some((line) => line.includes('"reason":"client_error"')));
  });

  it('counts relists, and folds the reflector failure reasons into the bounded label set', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const hook = informerMetricsHook(metrics.informer);
    hook.started?.('pods');
    hook.relist?.('pods');
    hook.watchError?.('pods', 'inactivity');
    hook.watchError?.('pods', 'forbidden');
    hook.watchError?.('pods', 'something new');
    assert.deepEqual(await series(metrics, 'loopwright_informer_relists_total'), ['{"resource":"pods"} 1']);
    const counted = (await series(metrics, 'loopwright_informer_watch_errors_total')).filter(
      (line) => !line.endsWith(' 0'),
    );
    assert.deepEqual(counted, [
      '{"resource":"pods","reason":"client_error"} 1',
      '{"resource":"pods","reason":"other"} 1',
      '{"resource":"pods","reason":"timeout"} 1',
    ]);
  });
});
