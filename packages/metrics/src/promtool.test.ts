import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { startHealthServer } from './health-server.ts';

const SETUP_HINT =
  'promtool is not on PATH. Install it (Debian package "prometheus") with: ' +
  'apt-get update && apt-get install -y --no-install-recommends prometheus';

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        resolve(body);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

// `promtool check metrics` parses the exposition and lints it with the rules Prometheus maintainers
// apply to exporters (counter suffixes, units, help texts): what a platform team's CI would run.
function promtoolCheckMetrics(exposition: string) {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  if (result.error !== undefined) {
    if ('code' in result.error && result.error.code === 'ENOENT') assert.fail(SETUP_HINT);
    throw result.error;
  }
  return result;
}

describe('promtool check metrics', () => {
  it('accepts the /metrics output of a process using every family and the defaults', async () => {
    const metrics = createMetrics();
    const provider = metrics.workqueueProvider;
    provider.newDepthMetric('at-scheduler').inc();
    provider.newDepthMetricWithPriority('cloud-node').inc(-100);
    provider.newAddsMetric('at-scheduler').inc();
    provider.newRetriesMetric('at-scheduler').inc();
    provider.newLatencyMetric('at-scheduler').observe(0.004);
    provider.newWorkDurationMetric('at-scheduler').observe(0.03);
    provider.newUnfinishedWorkSecondsMetric('at-scheduler').set(0.5);
    provider.newLongestRunningProcessorSecondsMetric('at-scheduler').set(0.5);
    const reconcile = metrics.reconcile.forController('at-scheduler', 2);
    reconcile.reconcileStarted();
    reconcile.reconcileFinished('requeue_after', 0.03);
    metrics.leaderElection.setLeading('at-scheduler', true);
    metrics.restClient.observeRequest({
      method: 'GET',
      host: '10.96.0.1:443',
      statusCode: 200,
      durationSeconds: 0.01,
    });
    metrics.restClient.observeRequest({
      method: 'GET',
      host: '10.96.0.1:443',
      statusCode: undefined,
      durationSeconds: 30,
    });
    metrics.informer.forResource('ats.cnat.programming-kubernetes.info').watchError('expired');

    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      registry: metrics.registry,
      isReady: () => true,
    });
    try {
      const exposition = await get(server.port, '/metrics');
      assert.match(
        exposition,
        /^controller_runtime_reconcile_total\{/m,
        'the families are in the scraped output',
      );
      assert.match(exposition, /^process_cpu_seconds_total /m, 'the defaults are in the scraped output');
      const result = promtoolCheckMetrics(exposition);
      assert.equal(result.stderr, '', 'promtool reports no problem');
      assert.equal(result.status, 0);
    } finally {
      await server.close();
    }
  });

  it('is strict enough to reject a gauge named like a counter (the check is real)', () => {
    const result = promtoolCheckMetrics('# HELP bad_total A gauge.\n# TYPE bad_total gauge\nbad_total 1\n');
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /non-counter metrics should not have "_total" suffix/);
  });
});
