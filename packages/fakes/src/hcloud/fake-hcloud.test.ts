/**
 * Direct tests of the fake Hetzner Cloud API. They speak raw HTTP, not through @loopwright/hcloud's
 * client, so the fake is checked against Hetzner's documented behaviour rather than against our client.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import {
  FAKE_HCLOUD_BAD_GATEWAY_HTML,
  startFakeHcloud,
  type FakeHcloud,
  type FakeHcloudOptions,
} from './index.ts';

async function fake(
  t: TestContext,
  options: FakeHcloudOptions = {},
): Promise<{
  api: FakeHcloud;
  clock: FakeClock;
  get: (
    path: string,
    token?: string,
  ) => Promise<{ status: number; headers: Headers; body: unknown; text: string }>;
}> {
  const clock = new FakeClock();
  const api = await startFakeHcloud({ clock, ...options });
  t.after(() => api.close());
  return {
    api,
    clock,
    async get(path, token = api.token) {
      const response = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, headers: response.headers, body, text };
    },
  };
}

interface ErrorBody {
  error: { code: string; message: string };
}

interface ListBody {
  servers: { id: number; name: string }[];
  meta: { pagination: Record<string, number | null> };
}

describe('fake hcloud: pagination', () => {
  it('pages with per_page 25 by default and fills meta.pagination like the API', async (t) => {
    const { api, get } = await fake(t);
    for (let i = 0; i < 120; i++) api.servers.add();
    const first = (await get('/servers')).body as ListBody;
    assert.equal(first.servers.length, 25);
    assert.deepEqual(first.meta.pagination, {
      page: 1,
      per_page: 25,
      previous_page: null,
      next_page: 2,
      last_page: 5,
      total_entries: 120,
    });
    const last = (await get('/servers?page=5')).body as ListBody;
    assert.equal(last.servers.length, 20);
    assert.deepEqual(last.meta.pagination, {
      page: 5,
      per_page: 25,
      previous_page: 4,
      next_page: null,
      last_page: 5,
      total_entries: 120,
    });
    const fifty = (await get('/servers?page=3&per_page=50')).body as ListBody;
    assert.equal(fifty.servers.length, 20);
    assert.deepEqual(
      fifty.servers.map((s) => s.id),
      api.servers
        .list()
        .slice(100)
        .map((s) => s.id),
    );
    const beyond = (await get('/servers?page=9&per_page=50')).body as ListBody;
    assert.deepEqual(beyond.servers, []);
    assert.equal(beyond.meta.pagination.next_page, null);
  });

  it('reports one empty page for an empty project', async (t) => {
    const { get } = await fake(t);
    assert.deepEqual(((await get('/servers')).body as ListBody).meta.pagination, {
      page: 1,
      per_page: 25,
      previous_page: null,
      next_page: null,
      last_page: 1,
      total_entries: 0,
    });
  });

  it('rejects per_page above 50 or below 1 and a non-numeric page with 400 invalid_input naming the field', async (t) => {
    const { get } = await fake(t);
    for (const query of ['per_page=51', 'per_page=0', 'page=x']) {
      const { status, body } = await get(`/servers?${query}`);
      assert.equal(status, 400, query);
      const error = (body as { error: { code: string; details: { fields: { name: string }[] } } }).error;
      assert.equal(error.code, 'invalid_input');
      assert.equal(error.details.fields[0]?.name, query.split('=')[0]);
    }
  });
});

describe('fake hcloud: filters', () => {
  it('supports the label selector operators, comma meaning AND', async (t) => {
    const { api, get } = await fake(t);
    const a = api.servers.add({ labels: { role: 'worker', pool: 'a' } });
    const b = api.servers.add({ labels: { role: 'worker', legacy: '' } });
    const c = api.servers.add({ labels: { role: 'control-plane' } });
    const d = api.servers.add();
    const ids = async (selector: string): Promise<number[]> =>
      ((await get(`/servers?label_selector=${encodeURIComponent(selector)}`)).body as ListBody).servers.map(
        (s) => s.id,
      );
    assert.deepEqual(await ids('role=worker'), [a.id, b.id]);
    assert.deepEqual(await ids('role==worker'), [a.id, b.id]);
    assert.deepEqual(await ids('role!=worker'), [c.id, d.id]);
    assert.deepEqual(await ids('role'), [a.id, b.id, c.id]);
    assert.deepEqual(await ids('!role'), [d.id]);
    assert.deepEqual(await ids('role=worker,!legacy'), [a.id]);
    assert.deepEqual(await ids('role in (control-plane, worker),pool notin (a)'), [b.id, c.id]);
    assert.equal((await get('/servers?label_selector=role%3D%3D%3Dx')).status, 400);
    assert.equal((await get(`/servers?label_selector=${encodeURIComponent('a b')}`)).status, 400);
  });

  it('filters by exact name and repeated status; an unknown status is invalid_input', async (t) => {
    const { api, get } = await fake(t);
    const web = api.servers.add({ name: 'web' });
    api.servers.add({ name: 'web-2' });
    const off = api.servers.add({ name: 'db', status: 'off' });
    const starting = api.servers.add({ status: 'starting' });
    assert.deepEqual(
      ((await get('/servers?name=web')).body as ListBody).servers.map((s) => s.id),
      [web.id],
    );
    assert.deepEqual(
      ((await get('/servers?status=off&status=starting')).body as ListBody).servers.map((s) => s.id),
      [off.id, starting.id],
    );
    assert.equal((await get('/servers?status=sleeping')).status, 400);
  });

  it('sorts by id, name or created, ascending or descending, later keys breaking ties; else invalid_input', async (t) => {
    const { api, get } = await fake(t);
    const b = api.servers.add({ name: 'b' });
    const a = api.servers.add({ name: 'a' });
    const b2 = api.servers.add({ name: 'b' });
    const ids = async (query: string) =>
      ((await get(`/servers?${query}`)).body as ListBody).servers.map((s) => s.id);
    assert.deepEqual(await ids(''), [b.id, a.id, b2.id], 'by id without sort');
    assert.deepEqual(await ids('sort=id:desc'), [b2.id, a.id, b.id]);
    assert.deepEqual(await ids('sort=name'), [a.id, b.id, b2.id]);
    assert.deepEqual(await ids('sort=name:desc&sort=id:desc'), [b2.id, b.id, a.id]);
    assert.deepEqual(await ids('sort=id:asc&per_page=2&page=2'), [b2.id], 'sorted before paging');
    for (const bad of ['bogus', 'id:up', 'name:asc:x']) {
      const answer = await get(`/servers?sort=${bad}`);
      assert.deepEqual([answer.status, (answer.body as ErrorBody).error.code], [400, 'invalid_input'], bad);
    }
  });
});

describe('fake hcloud: resources', () => {
  it('serves servers with realistic defaults and without the removed datacenter object', async (t) => {
    const { api, get } = await fake(t);
    const added = api.servers.add({ name: 'node-1' });
    const { status, body } = await get(`/servers/${added.id}`);
    assert.equal(status, 200);
    const server = (body as { server: Record<string, unknown> }).server;
    assert.deepEqual(server, added);
    assert.equal(server.status, 'running');
    assert.equal((server.server_type as { name: string }).name, 'cx22');
    assert.deepEqual(
      [
        (server.location as { name: string }).name,
        (server.location as { network_zone: string }).network_zone,
      ],
      ['nbg1', 'eu-central'],
    );
    assert.match((server.public_net as { ipv6: { ip: string } }).ipv6.ip, /^2a01:[0-9a-f:]+::\/64$/);
    assert.match((server.public_net as { ipv4: { ip: string } }).ipv4.ip, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal('datacenter' in server, false);
    assert.ok(api.servers.add().id > added.id, 'ids increase');
  });

  it('changes and deletes servers through the state API', async (t) => {
    const { api, get } = await fake(t);
    const server = api.servers.add({ location: 'hel1', server_type: 'cax11' });
    api.servers.update(server.id, { status: 'off', public_net: { ipv4: null } });
    const updated = (
      (await get(`/servers/${server.id}`)).body as {
        server: { status: string; public_net: { ipv4: unknown; ipv6: unknown }; location: { name: string } };
      }
    ).server;
    assert.equal(updated.status, 'off');
    assert.equal(updated.public_net.ipv4, null);
    assert.notEqual(updated.public_net.ipv6, null, 'a public_net patch replaces only the keys it names');
    assert.equal(updated.location.name, 'hel1');
    assert.equal(api.servers.delete(server.id), true);
    const gone = await get(`/servers/${server.id}`);
    assert.equal(gone.status, 404);
    assert.equal((gone.body as { error: { code: string } }).error.code, 'not_found');
    assert.equal((await get('/servers/abc')).status, 400);
    assert.throws(() => api.servers.add({ location: 'mars1' }), /unknown location/);
  });

  it('serves locations and networks (name filter, attached servers)', async (t) => {
    const { api, get } = await fake(t);
    const network = api.networks.add({ name: 'k8s' });
    api.networks.add({ name: 'other' });
    const server = api.servers.add({
      private_net: [{ network: network.id, ip: '10.0.0.2', alias_ips: [], mac_address: '86:00:00:00:00:01' }],
    });
    const locations = (await get('/locations')).body as { locations: { name: string }[] };
    assert.deepEqual(
      locations.locations.map((l) => l.name),
      ['fsn1', 'nbg1', 'hel1', 'ash', 'hil', 'sin'],
    );
    const byName = (await get('/networks?name=k8s')).body as {
      networks: { id: number; servers: number[] }[];
    };
    assert.deepEqual(
      byName.networks.map((n) => [n.id, n.servers]),
      [[network.id, [server.id]]],
    );
    assert.equal((await get(`/networks/${network.id + 100}`)).status, 404);
  });
});

describe('fake hcloud: auth and rate limit', () => {
  it('answers 401 unauthorized for a missing or wrong token without spending the budget', async (t) => {
    const { api, get } = await fake(t, { rateLimit: { limit: 5 } });
    const wrong = await get('/servers', 'nope');
    assert.equal(wrong.status, 401);
    assert.equal((wrong.body as { error: { code: string } }).error.code, 'unauthorized');
    const missing = await fetch(`${api.url}/servers`);
    assert.equal(missing.status, 401);
    await missing.text();
    assert.equal((await get('/servers')).headers.get('ratelimit-remaining'), '4');
  });

  it('is a token bucket: headers on every response, 429 rate_limit_exceeded when empty, 1 token per second back', async (t) => {
    const { clock, get, api } = await fake(t, { rateLimit: { limit: 3, refillPerSecond: 1 } });
    const nowSeconds = clock.wallTime() / 1000;
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const { status, headers } = await get('/locations');
      assert.equal(status, 200);
      assert.equal(headers.get('ratelimit-limit'), '3');
      remaining.push(headers.get('ratelimit-remaining'));
      assert.equal(
        headers.get('ratelimit-reset'),
        String(nowSeconds + i + 1),
        'reset = when the bucket is full again',
      );
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const limited = await get('/locations');
    assert.equal(limited.status, 429);
    assert.equal((limited.body as { error: { code: string } }).error.code, 'rate_limit_exceeded');
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
    clock.step(999);
    assert.equal((await get('/locations')).status, 429);
    clock.step(1);
    assert.equal((await get('/locations')).status, 200);
    assert.equal(api.requests.count({ status: 429 }), 2);
  });
});

describe('fake hcloud: faults and request log', () => {
  it('injects queued faults in order, scoped by path, without spending the budget', async (t) => {
    const { api, get } = await fake(t, { rateLimit: { limit: 10 } });
    api.faults.nonJson502();
    api.faults.next({ status: 503, times: 2, path: '/v1/servers' });
    assert.equal(api.faults.pending(), 3);
    const html = await get('/locations');
    assert.equal(html.status, 502);
    assert.equal(html.text, FAKE_HCLOUD_BAD_GATEWAY_HTML);
    assert.equal(html.headers.get('ratelimit-remaining'), null, 'a gateway page has no rate-limit headers');
    assert.equal((await get('/locations')).status, 200, 'the 503s only match /v1/servers');
    const unavailable = await get('/servers');
    assert.equal(unavailable.status, 503);
    assert.equal((unavailable.body as { error: { code: string } }).error.code, 'unavailable');
    assert.equal((await get('/servers')).status, 503);
    assert.equal((await get('/servers')).status, 200);
    assert.equal(api.faults.pending(), 0);
    assert.equal(api.rateLimit.headers()['RateLimit-Remaining'], '8');
  });

  it('resets the connection instead of answering, logged with status 0', async (t) => {
    const { api, get } = await fake(t);
    api.faults.connectionReset({ path: '/v1/locations' });
    await assert.rejects(get('/locations'), TypeError, 'fetch fails: no answer at all');
    assert.equal((await get('/locations')).status, 200);
    assert.deepEqual(
      api.requests.entries.map((entry) => entry.status),
      [0, 200],
    );
  });

  it('charges and logs a request whose client gave up before the answer, as the real API did the work', async (t) => {
    const { api, get } = await fake(t);
    api.faults.latency(200);
    await assert.rejects(
      fetch(`${api.url}/locations`, {
        headers: { Authorization: `Bearer ${api.token}` },
        signal: AbortSignal.timeout(20),
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    api.faults.latency(0);
    assert.deepEqual(
      api.requests.entries.map((entry) => [entry.path, entry.status]),
      [['/v1/locations', 200]],
    );
    assert.equal((await get('/locations')).headers.get('RateLimit-Remaining'), '3598');
  });

  it('switches every request to 401 and back', async (t) => {
    const { api, get } = await fake(t);
    api.faults.unauthorized();
    assert.equal((await get('/servers')).status, 401);
    api.faults.clear();
    assert.equal((await get('/servers')).status, 200);
  });

  it('logs method, path, templated endpoint, query, status and fake-clock time', async (t) => {
    const { api, get, clock } = await fake(t);
    const server = api.servers.add();
    await get('/servers?status=running&status=off');
    clock.step(5000);
    await get(`/servers/${server.id}`);
    await get('/servers/999');
    const [list, one, missing] = api.requests.entries;
    assert.ok(list && one && missing);
    assert.deepEqual(list.query.getAll('status'), ['running', 'off']);
    assert.deepEqual(
      [list.method, list.path, list.endpoint, list.status],
      ['GET', '/v1/servers', '/v1/servers', 200],
    );
    assert.deepEqual(
      [one.path, one.endpoint, one.at - list.at],
      [`/v1/servers/${server.id}`, '/v1/servers/{id}', 5000],
    );
    assert.equal(api.requests.count({ endpoint: '/v1/servers/{id}' }), 2);
    assert.equal(api.requests.count({ endpoint: '/v1/servers/{id}', status: 404 }), 1);
    assert.equal(api.requests.count({ since: one.at }), 2);
    api.requests.clear();
    assert.equal(api.requests.count(), 0);
  });
});

describe('fake hcloud: listen address', () => {
  it('listens on 127.0.0.1 by default, or on `host`, and names it in url', async (t) => {
    const loopback = await fake(t);
    assert.match(loopback.api.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    // Any 127/8 address is this machine's loopback; one other than the default shows `host` is used.
    const other = await fake(t, { host: '127.0.0.2' });
    assert.match(other.api.url, /^http:\/\/127\.0\.0\.2:\d+\/v1$/);
    assert.equal((await other.get('/locations')).status, 200);
    const port = new URL(other.api.url).port;
    await assert.rejects(fetch(`http://127.0.0.1:${port}/v1/locations`));
  });
});
