import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, it, type TestContext } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { startFakeHcloud, type FakeHcloud, type FakeHcloudOptions } from '@loopwright/fakes/hcloud';
import { HcloudClient, type HcloudClientOptions } from './client.ts';
import { HcloudError, isNotFound, isRateLimited, isRetryable, isUnauthorized } from './errors.ts';
import type { HcloudRequestLabels } from './observability.ts';
import type { RateLimitState } from './rate-limit.ts';

interface Setup {
  fake: FakeHcloud;
  clock: FakeClock;
  client: HcloudClient;
  /** Every metrics hook call, in order. */
  metrics: { requests: HcloudRequestLabels[]; remaining: number[] };
  /** Every log line, serialised as a logger would. */
  logs: string[];
}

async function setup(
  t: TestContext,
  options: { fake?: FakeHcloudOptions; client?: Partial<HcloudClientOptions> } = {},
): Promise<Setup> {
  const clock = new FakeClock({ autoAdvance: true });
  const fake = await startFakeHcloud({ clock, ...options.fake });
  t.after(() => fake.close());
  const metrics: Setup['metrics'] = { requests: [], remaining: [] };
  const logs: string[] = [];
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    logs.push(JSON.stringify({ level, message, ...fields }));
  };
  const client = new HcloudClient({
    token: fake.token,
    endpoint: fake.url,
    clock,
    metrics: {
      request: (labels) => metrics.requests.push(labels),
      rateLimitRemaining: (n) => metrics.remaining.push(n),
    },
    logger: { debug: log('debug'), warn: log('warn') },
    ...options.client,
  });
  return { fake, clock, client, metrics, logs };
}

/** Awaits a rejection and returns it as an HcloudError (failing the test for anything else). */
async function rejection(promise: Promise<unknown>): Promise<HcloudError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HcloudError, `expected an HcloudError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}

/** Equal jitter: retry n sleeps within [step/2, step] where step = base * 2^n. */
function assertBackoff(sleeps: number[], baseMs: number): void {
  sleeps.forEach((ms, n) => {
    const step = baseMs * 2 ** n;
    assert.ok(ms >= step / 2 && ms <= step, `retry ${n} slept ${ms} ms, expected ${step / 2}..${step}`);
  });
}

describe('HcloudClient.listServers', () => {
  it('follows next_page across all pages, 50 per page, in id order', async (t) => {
    const { fake, client } = await setup(t);
    for (let i = 0; i < 120; i++) fake.servers.add();
    const servers = await client.listServers();
    assert.deepEqual(
      servers.map((s) => s.id),
      fake.servers.list().map((s) => s.id),
    );
    const pages = fake.requests.filter({ path: '/v1/servers' });
    assert.deepEqual(
      pages.map((r) => [r.query.get('page'), r.query.get('per_page'), r.query.get('sort')]),
      [
        ['1', '50', 'id:asc'],
        ['2', '50', 'id:asc'],
        ['3', '50', 'id:asc'],
      ],
    );
  });

  it('streams page by page: stopping early fetches no further pages', async (t) => {
    const { fake, client } = await setup(t);
    for (let i = 0; i < 60; i++) fake.servers.add();
    let seen = 0;
    for await (const server of client.iterateServers()) {
      assert.ok(server.id > 0);
      if (++seen === 10) break;
    }
    assert.equal(fake.requests.count({ path: '/v1/servers' }), 1);
  });

  it('sends name, label_selector and one status parameter per status, and returns exactly the matches', async (t) => {
    const { fake, client } = await setup(t);
    const worker = fake.servers.add({ name: 'worker-1', labels: { role: 'worker' } });
    fake.servers.add({ name: 'worker-10', labels: { role: 'worker' } });
    const off = fake.servers.add({ name: 'worker-2', labels: { role: 'worker' }, status: 'off' });
    fake.servers.add({ name: 'cp', labels: { role: 'control-plane' }, status: 'off' });

    assert.deepEqual(
      (await client.listServers({ name: 'worker-1' })).map((s) => s.id),
      [worker.id],
    );
    assert.deepEqual(
      (await client.listServers({ labelSelector: 'role=worker', status: ['off', 'starting'] })).map(
        (s) => s.id,
      ),
      [off.id],
    );
    const [byName, filtered] = fake.requests.entries;
    assert.ok(byName && filtered);
    assert.equal(byName.query.get('name'), 'worker-1');
    assert.equal(filtered.query.get('label_selector'), 'role=worker');
    assert.deepEqual(filtered.query.getAll('status'), ['off', 'starting']);
  });

  it('maps a full server, with top-level location and private networks', async (t) => {
    const { fake, client } = await setup(t);
    const added = fake.servers.add({
      name: 'node-a',
      location: 'hel1',
      server_type: 'cx32',
      labels: { pool: 'a' },
      private_net: [
        { network: 4711, ip: '10.0.0.5', alias_ips: ['10.0.0.6'], mac_address: '86:00:00:12:34:56' },
      ],
    });
    const [server] = await client.listServers();
    assert.deepEqual(server, {
      id: added.id,
      name: 'node-a',
      status: 'running',
      created: added.created,
      server_type: { name: 'cx32' },
      location: {
        id: 3,
        name: 'hel1',
        description: 'Helsinki DC Park 1',
        country: 'FI',
        city: 'Helsinki',
        network_zone: 'eu-central',
      },
      public_net: { ipv4: { ip: added.public_net.ipv4?.ip }, ipv6: { ip: added.public_net.ipv6?.ip } },
      private_net: [
        { network: 4711, ip: '10.0.0.5', alias_ips: ['10.0.0.6'], mac_address: '86:00:00:12:34:56' },
      ],
      labels: { pool: 'a' },
    });
  });

  it('reads null ipv4/ipv6, missing optional fields and unknown statuses without failing', async (t) => {
    const { fake, client } = await setup(t);
    fake.servers.add({ public_net: { ipv4: null, ipv6: null } });
    const [noIps] = await client.listServers();
    assert.deepEqual(noIps?.public_net, { ipv4: null, ipv6: null });

    // Today's JSON may lack whole objects; a legacy `datacenter` is ignored.
    fake.faults.next({
      status: 200,
      body: {
        servers: [
          { id: 7, name: 'bare', status: 'hibernating' },
          {
            id: 8,
            name: 'nulls',
            status: 'off',
            created: null,
            server_type: null,
            location: null,
            public_net: null,
            private_net: null,
            labels: null,
            datacenter: { name: 'fsn1-dc14' },
          },
          {
            id: 9,
            name: 'partial',
            status: 'running',
            public_net: { ipv6: { ip: '2a01:4f8::/64' } },
            private_net: [{ network: 1 }],
            location: { name: 'fsn1' },
          },
        ],
        meta: null,
      },
    });
    const servers = await client.listServers();
    const empty = {
      created: null,
      server_type: null,
      location: null,
      public_net: { ipv4: null, ipv6: null },
      private_net: [],
      labels: {},
    };
    assert.deepEqual(servers[0], { id: 7, name: 'bare', status: 'unknown', ...empty });
    assert.deepEqual(servers[1], { id: 8, name: 'nulls', status: 'off', ...empty });
    const partial = servers[2];
    assert.ok(partial);
    assert.deepEqual(partial.public_net, { ipv4: null, ipv6: { ip: '2a01:4f8::/64' } });
    assert.deepEqual(partial.private_net, [{ network: 1, ip: null, alias_ips: [], mac_address: null }]);
    assert.deepEqual(partial.location, {
      id: null,
      name: 'fsn1',
      description: null,
      country: null,
      city: null,
      network_zone: null,
    });
  });

  it('turns JSON of the wrong shape into invalid_response naming the field, not a TypeError', async (t) => {
    const { fake, client } = await setup(t);
    fake.faults.next({
      status: 200,
      body: {
        servers: [
          { id: 1, name: 'ok', status: 'running' },
          { id: '2', name: 'bad', status: 'running' },
        ],
      },
    });
    const wrongId = await rejection(client.listServers());
    assert.equal(wrongId.code, 'invalid_response');
    assert.match(wrongId.message, /servers\[1\]\.id: expected an integer, got "2"/);
    assert.equal(isRetryable(wrongId), false);

    fake.faults.next({ status: 200, body: { locations: [] } });
    assert.match((await rejection(client.listServers())).message, /servers: expected an array, got missing/);

    fake.faults.next({
      status: 200,
      body: { servers: [{ id: 1, name: 'x', status: 'running' }], meta: { pagination: { next_page: 1 } } },
    });
    assert.match(
      (await rejection(client.listServers())).message,
      /next_page/,
      'a non-advancing next_page must not loop',
    );

    fake.faults.next({
      status: 200,
      body: { servers: [{ id: 1, name: 'x', status: 'running', public_net: { ipv4: { ip: 42 } } }] },
    });
    assert.match(
      (await rejection(client.listServers())).message,
      /servers\[0\]\.public_net\.ipv4\.ip: expected a string/,
    );
  });
});

describe('HcloudClient.getServer', () => {
  it('returns the server, or null for 404 not_found after exactly one request', async (t) => {
    const { fake, client, clock } = await setup(t);
    const added = fake.servers.add({ name: 'x' });
    assert.equal((await client.getServer(added.id))?.name, 'x');
    assert.equal(await client.getServer(added.id + 1), null);
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}' }), 2);
    assert.deepEqual(clock.armedDelays, []);
    await assert.rejects(client.getServer(0), RangeError);
  });

  it('does not read a 404 without the API error body as "server gone"', async (t) => {
    const { fake, client } = await setup(t);
    fake.faults.next({ status: 404, body: '<html>404 page not found</html>' });
    const error = await rejection(client.getServer(1));
    assert.deepEqual([error.status, error.code, isNotFound(error)], [404, 'invalid_response', false]);
  });
});

describe('HcloudClient errors and retries', () => {
  it('parses the API error body into status, code, message and details', async (t) => {
    const { fake, client } = await setup(t);
    fake.faults.next({
      status: 403,
      body: { error: { code: 'forbidden', message: 'insufficient permissions', details: { scope: 'read' } } },
    });
    const forbidden = await rejection(client.listLocations());
    assert.deepEqual(
      [forbidden.status, forbidden.code, forbidden.details, forbidden.endpoint],
      [403, 'forbidden', { scope: 'read' }, '/locations'],
    );
    assert.match(forbidden.message, /insufficient permissions/);

    const invalid = await rejection(client.listServers({ labelSelector: 'a b' }));
    assert.equal(invalid.code, 'invalid_input');
    assert.deepEqual(
      (invalid.details as { fields: { name: string }[] }).fields.map((f) => f.name),
      ['label_selector'],
    );
  });

  it('retries 502 bad_gateway and 504 timeout with jittered exponential backoff, then succeeds', async (t) => {
    const { fake, client, clock, metrics } = await setup(t, { client: { retryBaseDelayMs: 400 } });
    fake.servers.add();
    fake.faults.next({ status: 502, times: 2 });
    fake.faults.next({ status: 504 });
    assert.equal((await client.listServers()).length, 1);
    assert.equal(fake.requests.count(), 4);
    assert.equal(clock.armedDelays.length, 3);
    assertBackoff(clock.armedDelays, 400);
    assert.deepEqual(
      metrics.requests.map(({ code }) => code),
      ['502', '502', '504', '200'],
    );
  });

  it('does not retry 500, 503, maintenance or locked: retries would pile onto an incident (as hcloud-go)', async (t) => {
    const { fake, client, clock } = await setup(t);
    for (const fault of [
      { status: 500 },
      { status: 503 },
      { status: 503, code: 'maintenance' },
      { status: 423, code: 'locked' },
    ]) {
      fake.requests.clear();
      clock.armedDelays.length = 0;
      fake.faults.next({ ...fault, times: 5 });
      const error = await rejection(client.listLocations());
      assert.deepEqual([error.status, isRetryable(error)], [fault.status, false]);
      assert.equal(fake.requests.count(), 1, `${JSON.stringify(fault)} is not retried`);
      assert.deepEqual(clock.armedDelays, []);
      fake.faults.clear();
    }
  });

  it('treats a non-JSON 502 as invalid_response with the status, retries it and gives up after maxRetries', async (t) => {
    const { fake, client, clock } = await setup(t, { client: { maxRetries: 2 } });
    fake.faults.nonJson502({ times: 5 });
    const error = await rejection(client.listLocations());
    assert.deepEqual([error.status, error.code, isRetryable(error)], [502, 'invalid_response', true]);
    assert.match(error.message, /502 Bad Gateway/);
    assert.equal(fake.requests.count(), 3, 'maxRetries 2 = 3 attempts');
    assert.equal(clock.armedDelays.length, 2);

    fake.faults.clear();
    fake.faults.nonJson502({ times: 1 });
    assert.equal((await client.listLocations()).length, 6);
  });

  it('retries the transient API codes (conflict, bad_gateway, timeout) but never 401, 403, 404 or invalid_input', async (t) => {
    const { fake, client, clock } = await setup(t);
    fake.faults.next({ status: 409, code: 'conflict' });
    fake.faults.next({ status: 502, code: 'bad_gateway' });
    fake.faults.next({ status: 504, code: 'timeout' });
    await client.listLocations();
    assert.equal(fake.requests.count(), 4);

    for (const status of [401, 403, 400]) {
      fake.requests.clear();
      clock.armedDelays.length = 0;
      fake.faults.next({ status, times: 5 });
      const error = await rejection(client.listLocations());
      assert.equal(error.status, status);
      assert.equal(fake.requests.count(), 1, `${status} is not retried`);
      assert.deepEqual(clock.armedDelays, []);
      fake.faults.clear();
    }
    fake.requests.clear();
    assert.equal(await client.getNetwork(12345), null);
    assert.equal(fake.requests.count(), 1, '404 is an answer, not retried');
  });

  it('reports 401 as unauthorized after one request', async (t) => {
    const { fake, client } = await setup(t);
    fake.faults.unauthorized();
    const error = await rejection(client.listServers());
    assert.ok(isUnauthorized(error));
    assert.equal(fake.requests.count(), 1);
  });

  it('times out a slow answer with code timeout and no status', async (t) => {
    const { fake, client, metrics } = await setup(t, { client: { timeoutMs: 40, maxRetries: 1 } });
    fake.faults.latency(2_000);
    const error = await rejection(client.listLocations());
    assert.deepEqual([error.code, error.status, isRetryable(error)], ['timeout', undefined, true]);
    assert.deepEqual(metrics.requests, [
      { code: 'timeout', method: 'get', api_endpoint: '/locations' },
      { code: 'timeout', method: 'get', api_endpoint: '/locations' },
    ]);
  });

  it('reports a refused connection as network_error at once, without retries (as hcloud-go)', async (t) => {
    const { fake, clock } = await setup(t);
    const closed = await startFakeHcloud();
    await closed.close();
    const client = new HcloudClient({ token: fake.token, endpoint: closed.url, clock, maxRetries: 2 });
    const error = await rejection(client.listLocations());
    assert.deepEqual([error.code, error.status, isRetryable(error)], ['network_error', undefined, false]);
    assert.match(error.message, /ECONNREFUSED/);
    assert.equal(clock.armedDelays.length, 0);
  });

  it('fails with code aborted when the signal fires, also during a wait', async (t) => {
    const { fake, client } = await setup(t);
    const error = await rejection(client.listServers({}, { signal: AbortSignal.abort() }));
    assert.equal(error.code, 'aborted');
    assert.equal(isRetryable(error), false);
    assert.equal(fake.requests.count(), 0);

    // Real time: a 429 whose next token is ~1000 s away; the abort must end the wait.
    const slow = await startFakeHcloud({ rateLimit: { limit: 1, refillPerSecond: 0.001 } });
    t.after(() => slow.close());
    slow.rateLimit.set(0);
    const realClient = new HcloudClient({
      token: slow.token,
      endpoint: slow.url,
      maxRateLimitWaitMs: 10_000_000,
    });
    const started = performance.now();
    const waited = await rejection(realClient.listLocations({ signal: AbortSignal.timeout(50) }));
    assert.equal(waited.code, 'aborted');
    assert.ok(performance.now() - started < 5_000, 'the wait ended at the abort');
    assert.equal(slow.requests.count(), 1);
  });
});

describe('HcloudClient rate limits', () => {
  it('parses RateLimit-* from every response into client.rateLimit, onRateLimit and the gauge', async (t) => {
    const seen: RateLimitState[] = [];
    const { client, clock, metrics } = await setup(t, {
      client: { onRateLimit: (state) => seen.push(state) },
    });
    assert.equal(client.rateLimit, undefined);
    await client.listLocations();
    await client.listServers();
    assert.deepEqual(client.rateLimit, {
      limit: 3600,
      remaining: 3598,
      resetAt: clock.wallTime() + 2000,
      observedAt: clock.wallTime(),
    });
    assert.deepEqual(
      seen.map((s) => s.remaining),
      [3599, 3598],
    );
    assert.deepEqual(metrics.remaining, [3599, 3598]);
  });

  it('on 429 waits for the next token (from RateLimit-Reset) and then succeeds', async (t) => {
    const { fake, client, clock } = await setup(t, {
      fake: { rateLimit: { limit: 3600, refillPerSecond: 1 } },
    });
    fake.rateLimit.set(0);
    assert.equal((await client.listLocations()).length, 6);
    assert.deepEqual(
      fake.requests.entries.map((r) => r.status),
      [429, 200],
    );
    // Bucket empty, full again in 3600 s: one token per 1000 ms, not the hour until Reset.
    assert.deepEqual(clock.armedDelays, [1000]);
  });

  it('bounds the total 429 wait by maxRateLimitWaitMs, then throws the 429', async (t) => {
    const { fake, client, clock } = await setup(t, { client: { maxRateLimitWaitMs: 2_500 } });
    const reset = String(Math.ceil(clock.wallTime() / 1000) + 3600);
    fake.faults.next({
      status: 429,
      times: 10,
      headers: { 'RateLimit-Limit': '3600', 'RateLimit-Remaining': '0', 'RateLimit-Reset': reset },
    });
    const error = await rejection(client.listLocations());
    assert.ok(isRateLimited(error));
    assert.equal(error.rateLimit?.remaining, 0);
    assert.equal(fake.requests.count(), 3);
    assert.equal(clock.armedDelays.reduce((a, b) => a + b, 0) <= 2_500, true);

    const noWait = new HcloudClient({ token: fake.token, endpoint: fake.url, clock, maxRateLimitWaitMs: 0 });
    fake.requests.clear();
    assert.ok(isRateLimited(await rejection(noWait.listLocations())));
    assert.equal(fake.requests.count(), 1);
  });
});

describe('HcloudClient resources', () => {
  it('lists locations with their network zones', async (t) => {
    const { client } = await setup(t);
    const locations = await client.listLocations();
    assert.deepEqual(
      locations.map((l) => `${l.name}/${l.network_zone ?? ''}`),
      [
        'fsn1/eu-central',
        'nbg1/eu-central',
        'hel1/eu-central',
        'ash/us-east',
        'hil/us-west',
        'sin/ap-southeast',
      ],
    );
  });

  it('resolves HCLOUD_NETWORK by id, numeric string or name (falling back to the name like hcloud-go)', async (t) => {
    const { fake, client } = await setup(t);
    const k8s = fake.networks.add({ name: 'k8s', ip_range: '10.0.0.0/8' });
    const numeric = fake.networks.add({ name: '99999' });
    assert.deepEqual(await client.getNetwork(k8s.id), {
      id: k8s.id,
      name: 'k8s',
      ip_range: '10.0.0.0/8',
      labels: {},
    });
    assert.equal((await client.getNetwork(String(k8s.id)))?.name, 'k8s');
    assert.equal((await client.getNetwork('k8s'))?.id, k8s.id);
    assert.equal(
      (await client.getNetwork('99999'))?.id,
      numeric.id,
      'no network with id 99999: try the name',
    );
    assert.equal(await client.getNetwork('missing'), null);
    assert.equal(await client.getNetwork(99999), null, 'a number is only an id');
  });

  it('validates the token with one cheap request', async (t) => {
    const { fake, client } = await setup(t);
    await client.validateToken();
    assert.equal(fake.requests.count(), 1);
    assert.equal(fake.requests.entries[0]?.query.get('per_page'), '1');

    const bad = new HcloudClient({ token: 'wrong-token-value', endpoint: fake.url });
    const error = await rejection(bad.validateToken());
    assert.ok(isUnauthorized(error));
    assert.match(error.message, /rejected the token/);
  });

  it('a token function is called per request: a corrected token is used without a new client', async (t) => {
    let token = 'revoked-token-value';
    const { fake, client } = await setup(t, { client: { token: () => token } });
    assert.ok(isUnauthorized(await rejection(client.validateToken())));
    token = fake.token;
    await client.validateToken();
    assert.deepEqual(
      fake.requests.entries.map((request) => request.status),
      [401, 200],
    );
  });

  it("labels metrics as hcloud-go does: code, method, api_endpoint with ids as '-', never a raw id", async (t) => {
    const { fake, client, metrics } = await setup(t);
    const server = fake.servers.add();
    await client.getServer(server.id);
    await client.getServer(server.id + 1);
    await client.listServers({ name: server.name });
    await client.getNetwork(99999);
    assert.deepEqual(metrics.requests, [
      { code: '200', method: 'get', api_endpoint: '/servers/-' },
      { code: '404', method: 'get', api_endpoint: '/servers/-' },
      { code: '200', method: 'get', api_endpoint: '/servers' },
      { code: '404', method: 'get', api_endpoint: '/networks/-' },
    ]);
  });
});

describe('HcloudClient token secrecy', () => {
  it('never puts the token in errors, logs or the client object', async (t) => {
    const token = 'secret-token-0123456789abcdefghijklmnopqrstuvwxyz-0123456789ABCDEF';
    const { fake, client, logs } = await setup(t, { client: { token, maxRetries: 1 } });
    const errors: HcloudError[] = [];
    // Wrong token for this fake: 401.
    errors.push(await rejection(client.validateToken()));
    // A misbehaving server echoing the token back.
    fake.faults.next({
      status: 400,
      body: {
        error: { code: 'invalid_input', message: `bad header Bearer ${token}`, details: { header: token } },
      },
    });
    errors.push(await rejection(client.listServers()));
    fake.faults.next({ status: 502, body: `upstream said ${token}`, times: 2 });
    errors.push(await rejection(client.listServers()));
    const closed = await startFakeHcloud();
    await closed.close();
    errors.push(
      await rejection(new HcloudClient({ token, endpoint: closed.url, maxRetries: 0 }).listServers()),
    );

    assert.ok(logs.length > 0);
    for (const text of [
      ...errors.flatMap((error) => [
        JSON.stringify(error),
        error.message,
        error.stack ?? '',
        inspect(error, { depth: 5 }),
        JSON.stringify(error.details),
      ]),
      ...logs,
      JSON.stringify(client),
      inspect(client, { depth: 5 }),
    ]) {
      assert.equal(text.includes(token), false, `token leaked in: ${text.slice(0, 200)}`);
    }
    assert.match(errors[1]?.message ?? '', /\[REDACTED\]/);
    assert.throws(
      () => new HcloudClient({ token: `${token}\n` }),
      (error: Error) => !error.message.includes(token),
    );
  });
});
