import { HcloudClient } from '@loopwright/hcloud';
import { startFakeHcloud } from '@loopwright/fakes/hcloud';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createHcloudMetrics } from './hcloud-metrics.ts';

describe('createHcloudMetrics with the API client', () => {
  it("exports hcloud-go's hcloud_api_requests_total: help, labels code, method, api_endpoint", async (t) => {
    const fake = await startFakeHcloud();
    t.after(() => fake.close());
    const registry = new Registry();
    const client = new HcloudClient({
      token: fake.token,
      endpoint: fake.url,
      metrics: createHcloudMetrics(registry),
    });
    const server = fake.servers.add();
    await client.getServer(server.id);
    await client.getServer(server.id);
    await client.getServer(server.id + 1);
    await client.listServers();

    const text = await registry.metrics();
    const requests = text.split('\n').filter((line) => line.startsWith('hcloud_api_requests_total'));
    assert.deepEqual(requests.sort(), [
      'hcloud_api_requests_total{code="200",method="get",api_endpoint="/servers"} 1',
      'hcloud_api_requests_total{code="200",method="get",api_endpoint="/servers/-"} 2',
      'hcloud_api_requests_total{code="404",method="get",api_endpoint="/servers/-"} 1',
    ]);
    assert.match(
      text,
      /^# HELP hcloud_api_requests_total A counter for requests to the hcloud api per endpoint\.$/m,
    );
    assert.match(
      text,
      /^hcloud_api_request_duration_seconds_count\{code="404",method="get",api_endpoint="\/servers\/-"\} 1$/m,
    );
    assert.match(text, /^hcloud_ratelimit_remaining \d+$/m);
  });
});
