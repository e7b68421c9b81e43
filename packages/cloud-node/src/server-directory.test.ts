import { FakeClock } from '@loopwright/core/testing';
import { HcloudClient, httpGet } from '@loopwright/hcloud';
import { startFakeHcloud, type FakeHcloud } from '@loopwright/fakes/hcloud';
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { RequestBudget } from './budget.ts';
import { ServerDirectory } from './server-directory.ts';

describe('ServerDirectory on the fake API', () => {
  let fake: FakeHcloud;
  let clock: FakeClock;
  let client: HcloudClient;
  let directory: ServerDirectory;
  const ids: number[] = [];

  before(async () => {
    clock = new FakeClock({ wallTimeMs: 1_700_000_000_000 });
    fake = await startFakeHcloud({ clock });
    for (let i = 0; i < 120; i++) ids.push(fake.servers.add().id);
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.requests.clear();
    fake.faults.clear();
    fake.rateLimit.set(3600);
    client = new HcloudClient({
      token: fake.token,
      endpoint: fake.url,
      clock,
      maxRetries: 0,
      maxRateLimitWaitMs: 0,
    });
    directory = new ServerDirectory({
      client,
      budget: new RequestBudget({ rateLimit: () => client.rateLimit, now: () => clock.wallTime() }),
      now: () => clock.wallTime(),
      gatherMs: 5,
    });
  });

  const urgent = { maxAgeMs: 5000, priority: 'urgent' } as const;

  it('a burst of lookups larger than a sweep costs one sweep (3 pages), shared by all', async () => {
    const results = await Promise.all(ids.slice(0, 10).map((id) => directory.lookup({ id }, urgent)));
    assert.ok(results.every((r) => r.state === 'exists'));
    assert.equal(fake.requests.count(), 3);
    // A later lookup within the period reads the snapshot: no request.
    assert.equal((await directory.lookup({ id: ids[50] ?? 0 }, urgent)).state, 'exists');
    assert.equal(fake.requests.count(), 3);
  });

  it('a few lookups cost one GET /servers/{id} each once a sweep size is known', async () => {
    await directory.snapshot(urgent);
    clock.step(6000);
    fake.requests.clear();
    const results = await Promise.all([
      directory.lookup({ id: ids[1] ?? 0 }, urgent),
      directory.lookup({ id: ids[2] ?? 0 }, urgent),
    ]);
    assert.deepEqual(
      results.map((r) => r.state),
      ['exists', 'exists'],
    );
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}' }), 2);
    assert.equal(fake.requests.count(), 2);
  });

  it('forgets single answers past every TTL, servers found included, so the memory of lookups stays bounded', async () => {
    await directory.snapshot(urgent);
    clock.step(6000);
    await Promise.all([
      directory.lookup({ id: ids[1] ?? 0 }, urgent),
      directory.lookup({ id: ids[2] ?? 0 }, urgent),
    ]);
    assert.deepEqual(directory.remembered(), { points: 2, gone: 0 });
    // Within the gone TTL (10 min), answers are kept: a caller may still accept them.
    clock.step(300_000);
    assert.equal((await directory.lookup({ id: ids[3] ?? 0 }, urgent)).state, 'exists');
    assert.deepEqual(directory.remembered(), { points: 3, gone: 0 });
    // Past it, the next answer's write drops the two found first: no TTL accepts them any more.
    clock.step(300_001);
    assert.equal((await directory.lookup({ id: ids[4] ?? 0 }, urgent)).state, 'exists');
    assert.deepEqual(directory.remembered(), { points: 2, gone: 0 });
  });

  it('gone only after GET /servers/{id} says 404; a listing miss alone is never gone', async () => {
    await directory.snapshot(urgent);
    const victim = fake.servers.add().id; // created after the snapshot: missing from it
    fake.requests.clear();
    assert.equal((await directory.lookup({ id: victim }, urgent)).state, 'exists');
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}' }), 1);
    fake.servers.delete(victim);
    clock.step(6000);
    await directory.snapshot(urgent);
    fake.requests.clear();
    assert.equal((await directory.lookup({ id: victim }, urgent)).state, 'gone');
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}', status: 404 }), 1);
    // Remembered: no more requests for it.
    assert.equal((await directory.lookup({ id: victim }, urgent)).state, 'gone');
    assert.equal(fake.requests.count(), 1);
  });

  it('errors are unknown, never gone, and back off instead of retrying at once', async () => {
    fake.faults.next({ status: 503, times: 100 });
    const first = await directory.lookup({ id: 999_999 }, urgent);
    assert.ok(first.state === 'unknown' && first.cause === 'api-error');
    const sent = fake.requests.count();
    const second = await directory.lookup({ id: 999_999 }, urgent);
    assert.ok(second.state === 'unknown' && second.retryAfterMs > 0 && second.cause === 'api-error');
    assert.equal(fake.requests.count(), sent, 'no request while backing off');
    fake.faults.clear();
    fake.faults.unauthorized(true);
    clock.step(5000);
    assert.equal((await directory.lookup({ id: 999_999 }, urgent)).state, 'unknown');
  });

  it('a low budget postpones refresh sweeps without sending anything', async () => {
    await directory.snapshot(urgent);
    fake.rateLimit.set(100);
    await client.getServer(ids[0] ?? 0); // headers now say 99 remaining
    clock.step(1000);
    fake.requests.clear();
    const result = await directory.snapshot({ maxAgeMs: 500, priority: 'refresh' });
    assert.ok(!result.ok && result.retryAfterMs > 60_000 && result.cause === 'budget');
    assert.equal(fake.requests.count(), 0);
  });

  it("while urgent work is paced, confirming a fresh sweep's miss is not deferred (a gone Node still goes)", async () => {
    const quick = { maxAgeMs: 500, priority: 'urgent' } as const;
    const victim = fake.servers.add().id;
    fake.rateLimit.set(1000); // below half: urgent sweeps are paced
    await client.getServer(ids[0] ?? 0);
    clock.step(1000);
    const burst = await Promise.all(ids.slice(0, 5).map((id) => directory.lookup({ id }, quick)));
    assert.ok(burst.every((r) => r.state === 'exists')); // the first sweep goes (nothing paced yet)
    fake.servers.delete(victim);
    clock.step(1000);
    // The next period's sweep is paced (the first sweep's page at half the 1/s refill: 2 s apart)...
    const paced = await Promise.all(ids.slice(0, 5).map((id) => directory.lookup({ id }, quick)));
    assert.ok(paced.every((r) => r.state === 'unknown'));
    clock.step(60_000);
    fake.requests.clear();
    // ...and once it runs, its miss is confirmed at once.
    const results = await Promise.all(
      [...ids.slice(0, 5), victim].map((id) => directory.lookup({ id }, quick)),
    );
    assert.equal(results.at(-1)?.state, 'gone');
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}', status: 404 }), 1);
    // A lookup after the sweep (fresh snapshot, miss) confirms at once too.
    const other = fake.servers.add().id;
    fake.servers.delete(other);
    assert.equal((await directory.lookup({ id: other }, quick)).state, 'gone');
  });

  it("lookups trickling in one by one: single lookups until they and the next reach a sweep's pages, then one sweep all read", async () => {
    const perMinute = { maxAgeMs: 55_000, priority: 'urgent' } as const;
    const doomed = [fake.servers.add().id, fake.servers.add().id];
    await directory.snapshot(perMinute); // 122 servers: a sweep is 3 pages
    clock.step(60_000); // the snapshot is too old for them
    // Servers confirmed gone by single lookups are no demand: their Nodes go and never ask again.
    for (const id of doomed) fake.servers.delete(id);
    const confirmed = await Promise.all(doomed.map((id) => directory.lookup({ id }, perMinute)));
    assert.deepEqual(
      confirmed.map((r) => r.state),
      ['gone', 'gone'],
    );
    fake.requests.clear();
    const lookOne = async (i: number) => (await directory.lookup({ id: ids[i] ?? 0 }, perMinute)).state;
    assert.equal(await lookOne(0), 'exists');
    assert.equal(await lookOne(1), 'exists');
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}' }), 2);
    assert.equal(fake.requests.count({ endpoint: '/v1/servers' }), 0);
    // Two found within the last 55 s and a third asking: a sweep serves the three (and all others).
    assert.equal(await lookOne(2), 'exists');
    assert.equal(fake.requests.count({ endpoint: '/v1/servers' }), 3);
    for (let i = 3; i < 20; i++) assert.equal(await lookOne(i), 'exists');
    assert.equal(fake.requests.count(), 5);
    // Single lookups older than the age asked for are not demand any more: one lookup, one request.
    clock.step(56_000);
    fake.requests.clear();
    assert.equal(await lookOne(0), 'exists');
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}' }), 1);
    assert.equal(fake.requests.count(), 1);
  });

  it('a sweep failing on a later page answers unknown to all its lookups: its misses are neither gone nor confirmed', async () => {
    // The real client on the fake, its second page answered 503 (a partial sweep).
    let failSecondPage = false;
    const failing = new HcloudClient({
      token: fake.token,
      endpoint: fake.url,
      clock,
      maxRetries: 0,
      maxRateLimitWaitMs: 0,
      httpGet: (url, init) => {
        if (failSecondPage && url.includes('page=2')) fake.faults.next({ status: 503 });
        return httpGet(url, init);
      },
    });
    directory = new ServerDirectory({
      client: failing,
      budget: new RequestBudget({ rateLimit: () => failing.rateLimit, now: () => clock.wallTime() }),
      now: () => clock.wallTime(),
      gatherMs: 5,
    });
    const victim = fake.servers.add().id;
    await directory.snapshot(urgent);
    fake.servers.delete(victim);
    clock.step(6000);
    failSecondPage = true;
    fake.requests.clear();
    const results = await Promise.all(
      [victim, ...ids.slice(0, 5)].map((id) => directory.lookup({ id }, urgent)),
    );
    assert.ok(results.every((r) => r.state === 'unknown' && r.cause === 'api-error'));
    assert.equal(fake.requests.count({ endpoint: '/v1/servers', status: 503 }), 1);
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}' }), 0);
    // A complete sweep after the back-off: the miss is confirmed by id, then gone.
    failSecondPage = false;
    clock.step(2000);
    assert.equal((await directory.lookup({ id: victim }, urgent)).state, 'gone');
    assert.equal(fake.requests.count({ endpoint: '/v1/servers/{id}', status: 404 }), 1);
  });

  it('names: a miss is answered by one name query and believed for the negative TTL', async () => {
    await directory.snapshot(urgent);
    fake.requests.clear();
    const init = { maxAgeMs: Number.POSITIVE_INFINITY, priority: 'urgent' } as const;
    assert.equal((await directory.lookup({ name: 'no-such-server' }, init)).state, 'gone');
    assert.equal((await directory.lookup({ name: 'no-such-server' }, init)).state, 'gone');
    assert.equal(fake.requests.count(), 1);
    clock.step(31_000);
    assert.equal((await directory.lookup({ name: 'no-such-server' }, init)).state, 'gone');
    assert.equal(fake.requests.count(), 2);
  });
});
