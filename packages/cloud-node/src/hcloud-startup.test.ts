/**
 * The start-up calls against the fake Hetzner API with faults; waits are recorded instead of slept, and
 * the backoff's jitter is fixed, so the delays are exact.
 */
import { Backoff } from '@loopwright/core';
import { HcloudClient } from '@loopwright/hcloud';
import { startFakeHcloud, type FakeHcloud } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import {
  connectToHcloud,
  STARTUP_BACKOFF,
  StartupError,
  type HcloudStartupOptions,
  type StartupRetry,
} from './hcloud-startup.ts';

async function setUp(
  t: TestContext,
  overrides: Partial<HcloudStartupOptions> = {},
): Promise<{
  fake: FakeHcloud;
  start: () => ReturnType<typeof connectToHcloud>;
  retries: StartupRetry[];
  waits: number[];
}> {
  const fake = await startFakeHcloud();
  t.after(() => fake.close());
  const retries: StartupRetry[] = [];
  const waits: number[] = [];
  const start = () =>
    connectToHcloud({
      client: new HcloudClient({ token: fake.token, endpoint: fake.url, maxRetries: 0, timeoutMs: 2000 }),
      tokenSource: 'HCLOUD_TOKEN',
      network: undefined,
      backoff: new Backoff({ ...STARTUP_BACKOFF, random: () => 0 }),
      onRetry: (retry) => retries.push(retry),
      signal: new AbortController().signal,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
      ...overrides,
    });
  return { fake, start, retries, waits };
}

describe('connectToHcloud', () => {
  it('retries a 503, a connection reset and a non-JSON 200 with growing delays, then is ready', async (t) => {
    const { fake, start, retries, waits } = await setUp(t);
    fake.faults.next({ status: 503 });
    fake.faults.connectionReset();
    fake.faults.next({ status: 200, body: '{"locations": [' });
    assert.deepEqual(await start(), { kind: 'ready', networkId: undefined });
    assert.deepEqual(
      retries.map(({ step, error, attempt, retryAfterMs }) => ({
        step,
        code: error.code,
        attempt,
        retryAfterMs,
      })),
      [
        { step: 'check the token', code: 'unavailable', attempt: 1, retryAfterMs: 1000 },
        { step: 'check the token', code: 'network_error', attempt: 2, retryAfterMs: 2000 },
        { step: 'check the token', code: 'invalid_response', attempt: 3, retryAfterMs: 4000 },
      ],
    );
    assert.deepEqual(waits, [1000, 2000, 4000]);
    assert.equal(fake.requests.count(), 4, 'one request per attempt');
  });

  it('a rejected token ends start-up at once, naming the variable the token came from', async (t) => {
    const { fake, start, retries } = await setUp(t);
    fake.faults.unauthorized();
    await assert.rejects(start(), (error: unknown) => {
      assert.ok(error instanceof StartupError);
      assert.match(
        error.message,
        /^HCLOUD_TOKEN: the Hetzner Cloud API rejected the token \(401 unauthorized/,
      );
      return true;
    });
    assert.equal(retries.length, 0);
    assert.equal(fake.requests.count(), 1);
  });

  it('a 401 after an outage still ends start-up: the token does not heal', async (t) => {
    const { fake, start, retries } = await setUp(t, { tokenSource: 'HCLOUD_TOKEN_FILE' });
    fake.faults.next({ status: 502, body: '<html>bad gateway</html>' });
    fake.faults.next({ status: 401 });
    await assert.rejects(
      start(),
      /^StartupError: HCLOUD_TOKEN_FILE: the Hetzner Cloud API rejected the token/,
    );
    assert.equal(retries.length, 1);
    assert.equal(fake.requests.count(), 2);
  });

  it('an endpoint that is not the API (bare 404) ends start-up naming HCLOUD_ENDPOINT', async (t) => {
    const { fake, start } = await setUp(t);
    fake.faults.next({ status: 404, body: '<html>Not Found</html>' });
    await assert.rejects(start(), /^StartupError: HCLOUD_ENDPOINT: cannot check the token at http/);
  });

  it('HCLOUD_NETWORK: its lookup is retried too, without checking the token again', async (t) => {
    const { fake, start, retries } = await setUp(t, { network: 'k8s' });
    const network = fake.networks.add({ name: 'k8s' });
    fake.faults.next({ status: 500, path: '/v1/networks', times: 2 });
    assert.deepEqual(await start(), { kind: 'ready', networkId: network.id });
    assert.deepEqual(
      retries.map(({ step, attempt }) => ({ step, attempt })),
      [
        { step: 'look up HCLOUD_NETWORK "k8s"', attempt: 1 },
        { step: 'look up HCLOUD_NETWORK "k8s"', attempt: 2 },
      ],
    );
    assert.equal(fake.requests.count({ path: '/v1/locations' }), 1);
    assert.equal(fake.requests.count({ path: '/v1/networks' }), 3);
  });

  it('an unknown HCLOUD_NETWORK ends start-up naming it', async (t) => {
    const { start } = await setUp(t, { network: 'nope' });
    await assert.rejects(start(), /^StartupError: HCLOUD_NETWORK: no network with id or name "nope"/);
  });

  it('SIGTERM while waiting: stopped, no further request', async (t) => {
    const stopping = new AbortController();
    const { fake, start } = await setUp(t, {
      signal: stopping.signal,
      sleep: () => {
        stopping.abort();
        return Promise.resolve();
      },
    });
    fake.faults.next({ status: 503, times: 5 });
    assert.deepEqual(await start(), { kind: 'stopped' });
    assert.equal(fake.requests.count(), 1);
  });
});
