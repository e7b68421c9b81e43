// The priorities of requests waiting for a token, and background requests waiting for quiet.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { KubeApiFailure } from './api-error.ts';
import { BACKGROUND_MAX_WAIT_MS, BACKGROUND_QUIET_MS, BackgroundScheduler } from './background-priority.ts';
import { rejection, unlimitedTransport, wirePeer } from './wire-peer.test-support.ts';

const peer = wirePeer();

describe('KubeTransport priority', () => {
  it('a critical request waiting for a token goes before queued normal ones, background ones last', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { rateLimit: { qps: 10, burst: 1 }, clock });
    await client.request({ path: '/first' });
    const calls = [
      client.request({ path: '/event', priority: 'background' }),
      client.request({ path: '/claim-b' }),
      client.request({ path: '/create-a', priority: 'critical' }),
    ];
    await clock.advance(300);
    await Promise.all(calls);
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/first', '/prefix/create-a', '/prefix/claim-b', '/prefix/event'],
    );
    client.close();
  });
});

describe('KubeTransport background requests', () => {
  it('are sent only while no other request is on its way; an abort while waiting sends nothing', async () => {
    let release: (() => void) | undefined;
    peer.route = (req, res) => {
      const answer = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (req.url === '/prefix/slow') release = answer;
      else answer();
    };
    const client = unlimitedTransport(peer.kc);
    const slow = client.request({ path: '/slow' });
    await peer.requestsArrived(1);
    const event = client.request({ path: '/event', priority: 'background' });
    const abort = new AbortController();
    const abandoned = client.request({ path: '/abandoned', priority: 'background', signal: abort.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/slow'],
      'held back while /slow is unanswered',
    );
    abort.abort();
    assert.equal((await rejection(abandoned)).failure, KubeApiFailure.Aborted);
    release?.();
    await slow;
    await event;
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/slow', '/prefix/event'],
    );
    // Nothing else on its way: sent at once.
    await client.request({ path: '/event-2', priority: 'background' });
    assert.equal(peer.received.length, 3);
    client.close();
  });
});

describe('KubeTransport background quiet period', () => {
  it('a background request waits until nothing else has been on its way for BACKGROUND_QUIET_MS', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { clock });
    await client.request({ path: '/claim' });
    const event = client.request({ path: '/event', priority: 'background' });
    await clock.advance(BACKGROUND_QUIET_MS - 1);
    assert.equal(peer.received.length, 1, 'held back: the burst may go on');
    // Another request of the burst starts the quiet period over.
    await client.request({ path: '/create' });
    await clock.advance(BACKGROUND_QUIET_MS - 1);
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/claim', '/prefix/create'],
    );
    await clock.advance(1);
    await event;
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/claim', '/prefix/create', '/prefix/event'],
    );
    assert.equal(clock.pendingTimers(), 0);
    client.close();
  });
});

describe('KubeTransport background starvation', () => {
  it('steady requests with gaps longer than the quiet period do not starve a background request', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { clock });
    const first = client.request({ path: '/poll-0' });
    const event = client.request({ path: '/event', priority: 'background' });
    await first;
    for (let i = 1; i <= 3; i++) {
      await clock.advance(50);
      await client.request({ path: `/poll-${i}` });
    }
    await event;
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/poll-0', '/prefix/event', '/prefix/poll-1', '/prefix/poll-2', '/prefix/poll-3'],
    );
    client.close();
  });
});

describe('KubeTransport background requests on a transport that is never quiet', () => {
  it('are sent after BACKGROUND_MAX_WAIT_MS anyway: late, never starved', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { clock });
    const first = client.request({ path: '/reconcile-0' });
    let sentAtMs: number | undefined;
    const event = client.request({ path: '/event', priority: 'background' }).then(() => {
      sentAtMs = clock.now();
    });
    await first;
    // A busy controller: a new request every 10 ms, so the transport is never quiet for 20 ms.
    for (let i = 1; sentAtMs === undefined && i <= 1_000; i++) {
      await clock.advance(10);
      await client.request({ path: `/reconcile-${i}` });
    }
    assert.notEqual(sentAtMs, undefined, 'sent while the load went on');
    await event;
    assert.ok(
      sentAtMs !== undefined && sentAtMs >= BACKGROUND_MAX_WAIT_MS && sentAtMs <= BACKGROUND_MAX_WAIT_MS + 10,
      `sent once it had waited ${BACKGROUND_MAX_WAIT_MS} ms, not before or much after: ${sentAtMs}`,
    );
    assert.equal(clock.pendingTimers(), 0);
    client.close();
  });
});

describe('BackgroundScheduler', () => {
  /** Whether `promise` has settled once pending continuations ran, without time passing. */
  const settledYet = async (promise: Promise<unknown>): Promise<boolean> => {
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setImmediate(resolve));
    return settled;
  };

  it('lets a background request go at once on a transport that has been quiet, unless it is aborted', async () => {
    const clock = new FakeClock({ nowMs: 1_000 });
    const scheduler = new BackgroundScheduler(clock);
    assert.equal(await settledYet(scheduler.whenQuiet(new AbortController().signal)), true);
    scheduler.busied();
    await clock.advance(5);
    scheduler.settled();
    await clock.advance(BACKGROUND_QUIET_MS);
    assert.equal(await settledYet(scheduler.whenQuiet(new AbortController().signal)), true);
    const reason = new Error('shutting down');
    assert.throws(
      () => scheduler.whenQuiet(AbortSignal.abort(reason)),
      (error) => error === reason,
    );
    assert.equal(clock.pendingTimers(), 0);
  });

  it('counts the quiet period from the last request to settle, whatever the time', async () => {
    const clock = new FakeClock({ nowMs: 1_000 });
    const scheduler = new BackgroundScheduler(clock);
    scheduler.busied();
    scheduler.busied();
    scheduler.settled();
    const signal = new AbortController().signal;
    const waiting = scheduler.whenQuiet(signal);
    assert.equal(clock.pendingTimers(), 1, 'only the longest wait: no quiet period while one is on its way');
    await clock.advance(10);
    scheduler.settled();
    await clock.advance(BACKGROUND_QUIET_MS - 1);
    assert.equal(await settledYet(waiting), false);
    // A second waiter during the quiet period shares its timer.
    const second = scheduler.whenQuiet(signal);
    assert.equal(clock.pendingTimers(), 3, 'two longest waits and one quiet period');
    await clock.advance(1);
    assert.deepEqual([await settledYet(waiting), await settledYet(second)], [true, true]);
    assert.equal(clock.pendingTimers(), 0);
    assert.deepEqual(getEventListeners(signal, 'abort'), [], 'no listener left on the caller signal');
  });

  it('an abort while waiting rejects at once and leaves no timer or listener behind', async () => {
    const clock = new FakeClock({ nowMs: 1_000 });
    const scheduler = new BackgroundScheduler(clock);
    scheduler.busied();
    const abort = new AbortController();
    const waiting = scheduler.whenQuiet(abort.signal);
    const reason = new Error('shutting down');
    abort.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    assert.equal(clock.pendingTimers(), 0);
    assert.deepEqual(getEventListeners(abort.signal, 'abort'), []);
    scheduler.settled();
    await clock.advance(BACKGROUND_QUIET_MS);
    assert.equal(clock.pendingTimers(), 0, 'nobody left to wake');
  });

  it('keeps no process alive: its timers are unref’d', async () => {
    const clock = new FakeClock({ nowMs: 1_000 });
    const scheduler = new BackgroundScheduler(clock);
    scheduler.busied();
    scheduler.settled();
    const waiting = scheduler.whenQuiet(new AbortController().signal);
    assert.equal(clock.pendingTimers(), 2);
    assert.equal(clock.pendingTimers({ includeUnref: false }), 0);
    await clock.advance(BACKGROUND_QUIET_MS);
    await waiting;
  });
});
