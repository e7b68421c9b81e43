import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './create-metrics.ts';
import { bucketsOf, scrape, valueOf } from './exposition.test-support.ts';

describe('REST client metrics', () => {
  it('counts requests by code, method and host and times them by verb and host', async () => {
    const { restClient, registry } = createMetrics({ defaultMetrics: false });
    restClient.observeRequest({
      method: 'GET',
      host: '10.0.0.1:6443',
      statusCode: 200,
      durationSeconds: 0.02,
    });
    restClient.observeRequest({
      method: 'GET',
      host: '10.0.0.1:6443',
      statusCode: 200,
      durationSeconds: 0.2,
    });
    restClient.observeRequest({
      method: 'PATCH',
      host: '10.0.0.1:6443',
      statusCode: 409,
      durationSeconds: 3,
    });
    const exposition = await scrape(registry);

    const requests = (code: string, method: string) =>
      valueOf(exposition, 'rest_client_requests_total', { code, method, host: '10.0.0.1:6443' });
    assert.equal(requests('200', 'GET'), 2);
    assert.equal(requests('409', 'PATCH'), 1);

    const get = new Map(
      bucketsOf(exposition, 'rest_client_request_duration_seconds', { verb: 'GET', host: '10.0.0.1:6443' }),
    );
    assert.equal(get.get(0.025), 1);
    assert.equal(get.get(0.25), 2);
    const patch = new Map(
      bucketsOf(exposition, 'rest_client_request_duration_seconds', { verb: 'PATCH', host: '10.0.0.1:6443' }),
    );
    assert.equal(patch.get(2), 0);
    assert.equal(patch.get(4), 1);
  });

  it('reports a request without a response as code "<error>", like client-go', async () => {
    const { restClient, registry } = createMetrics({ defaultMetrics: false });
    restClient.observeRequest({ method: 'GET', host: 'api:443', statusCode: undefined, durationSeconds: 30 });
    const exposition = await scrape(registry);
    assert.equal(
      valueOf(exposition, 'rest_client_requests_total', { code: '<error>', method: 'GET', host: 'api:443' }),
      1,
    );
    assert.equal(
      valueOf(exposition, 'rest_client_request_duration_seconds_count', { verb: 'GET', host: 'api:443' }),
      1,
    );
  });
});
