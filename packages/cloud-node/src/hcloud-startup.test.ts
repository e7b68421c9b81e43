/**
 * The start-up calls against the fake Hetzner API with faults; waits are recorded instead of slept, and
 * the backoff's jitter is fixed, so the delays are exact.
 */
import { Backoff } from '@loopwright/core';
import { HcloudClient } from '@loopwright/hcloud';
import { startFakeHcloud, type FakeHcloud } from '@loopwright/fakes/hcloud';
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ConfigError } from '@loopwright/runtime';
import {
  connectToHcloud,
  STARTUP_BACKOFF,
  type HcloudStartupOptions,
  type StartupRetry,
} from './hcloud-startup.ts';

async function setUp(
  t: TestContext,
  { timeoutMs = 2000, ...overrides }: Partial<HcloudStartupOptions> & { timeoutMs?: number } = {},
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
      client: new HcloudClient({
        token: fake.token,
        endpoint: fake.url,
        maxRetries: 0,
        timeoutMs,
      }),
      names: { token: 'HCLOUD_TOKEN', endpoint: 'HCLOUD_ENDPOINT', network: 'HCLOUD_NETWORK' },
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

  /** Asserts that start-up ends with the one bad value `message` (a ConfigError: exit 2). */
  async function refuses(start: () => Promise<unknown>, message: RegExp): Promise<void> {
    await assert.rejects(start(), (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, message);
      return true;
    });
  }

  it('a rejected token ends start-up at once, naming the variable the token came from', async (t) => {
    const { fake, start, retries } = await setUp(t);
    fake.faults.unauthorized();
    await refuses(start, /^HCLOUD_TOKEN: the Hetzner Cloud API rejected the token \(401 unauthorized/);
    assert.equal(retries.length, 0);
    assert.equal(fake.requests.count(), 1);
  });

  it('a 401 after an outage still ends start-up: the token does not heal', async (t) => {
    const { fake, start, retries } = await setUp(t, {
      names: { token: '--hcloud-token-file', endpoint: 'HCLOUD_ENDPOINT', network: 'HCLOUD_NETWORK' },
    });
    fake.faults.next({ status: 502, body: '<html>bad gateway</html>' });
    fake.faults.next({ status: 401 });
    await refuses(start, /^--hcloud-token-file: the Hetzner Cloud API rejected the token/);
    assert.equal(retries.length, 1);
    assert.equal(fake.requests.count(), 2);
  });

  it('an endpoint that is not the API (bare 404) ends start-up naming the endpoint as set', async (t) => {
    const { fake, start } = await setUp(t, {
      names: { token: 'HCLOUD_TOKEN', endpoint: '--hcloud-endpoint', network: 'HCLOUD_NETWORK' },
    });
    fake.faults.next({ status: 404, body: '<html>Not Found</html>' });
    await refuses(start, /^--hcloud-endpoint: cannot check the token at http/);
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

  it('a network lookup without an answer in time is retried, never a bad value', async (t) => {
    const fake = await startFakeHcloud();
    t.after(() => fake.close());
    const network = fake.networks.add({ name: 'k8s' });
    const client = new HcloudClient({ token: fake.token, endpoint: fake.url, maxRetries: 0, timeoutMs: 200 });
    const retries: StartupRetry[] = [];
    const result = await connectToHcloud({
      client: {
        endpoint: client.endpoint,
        validateToken: (options) => client.validateToken(options),
        getNetwork: (idOrName, options) => {
          // The lookup's first attempt gets no answer within the client's timeout.
          if (retries.length === 0) fake.faults.latency(1000);
          return client.getNetwork(idOrName, options);
        },
      },
      names: { token: 'HCLOUD_TOKEN', endpoint: 'HCLOUD_ENDPOINT', network: 'HCLOUD_NETWORK' },
      network: 'k8s',
      onRetry: (retry) => {
        retries.push(retry);
        fake.faults.latency(0);
      },
      signal: new AbortController().signal,
      sleep: () => Promise.resolve(),
    });
    assert.deepEqual(result, { kind: 'ready', networkId: network.id });
    assert.deepEqual(
      retries.map(({ step, error }) => ({ step, status: error.status, code: error.code })),
      [{ step: 'look up HCLOUD_NETWORK "k8s"', status: undefined, code: 'timeout' }],
    );
  });

  it('a network the API does not know, by id or by name, ends start-up naming it as set', async (t) => {
    const names = { token: 'HCLOUD_TOKEN', endpoint: 'HCLOUD_ENDPOINT', network: '--hcloud-network' };
    const byName = await setUp(t, { network: 'nope', names });
    await refuses(byName.start, /^--hcloud-network: no network with id or name "nope" in this project$/);
    // An id: GET /networks/{id} answers 404 not_found, then no network has it as its name either.
    const byId = await setUp(t, { network: '424242', names: { ...names, network: 'HCLOUD_NETWORK' } });
    await refuses(byId.start, /^HCLOUD_NETWORK: no network with id or name "424242" in this project$/);
    assert.equal(byId.fake.requests.count({ path: '/v1/networks/424242' }), 1);
  });

  it('a lookup the API refuses (another 4xx) names the network; a 401 there names the token', async (t) => {
    const refused = await setUp(t, { network: 'k8s' });
    refused.fake.faults.next({ status: 400, path: '/v1/networks' });
    await refuses(refused.start, /^HCLOUD_NETWORK: cannot look up "k8s": /);
    const revoked = await setUp(t, { network: 'k8s' });
    revoked.fake.faults.next({ status: 401, path: '/v1/networks' });
    await refuses(revoked.start, /^HCLOUD_TOKEN: /);
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
