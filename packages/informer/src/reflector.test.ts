import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from '@loopwright/client';
import { Reflector, type ObjectEvent } from './reflector.ts';
import { FakeClock, settle } from '@loopwright/core/testing';
import { configMap, recordingLogger, ScriptedClient } from './scripted-client.test-support.ts';
import type { KubeObject } from '@loopwright/client';

function setup(options: { random?: () => number } = {}) {
  const clock = new FakeClock();
  const client = new ScriptedClient<KubeObject>();
  const replaced: { names: string[]; resourceVersion: string }[] = [];
  const applied: ObjectEvent<KubeObject>[] = [];
  const metrics = { started: [] as string[], errors: [] as string[], relists: 0 };
  const errors: Error[] = [];
  const logger = recordingLogger();
  const reflector = new Reflector<KubeObject>({
    client,
    clock,
    logger,
    sink: {
      replace: (items, resourceVersion) =>
        replaced.push({ names: items.map((i) => i.metadata?.name ?? ''), resourceVersion }),
      apply: (event) => applied.push(event),
    },
    metrics: {
      started: (resource) => metrics.started.push(resource),
      watchError: (resource, reason) => metrics.errors.push(`${resource}:${reason}`),
      relist: () => metrics.relists++,
    },
    onError: (error) => errors.push(error),
    // Jitter draw 0: delays are exactly 800, 1600, 3200... ms.
    backoff: { random: options.random ?? (() => 0) },
    random: () => 0,
    minWatchTimeoutSeconds: 300,
    inactivityTimeoutMs: 90_000,
  });
  const abort = new AbortController();
  const done = reflector.run(abort.signal);
  return { clock, client, reflector, replaced, applied, metrics, errors, logger, abort, done };
}

const request = { method: 'GET', path: '/api/v1/configmaps' };

const networkError = () =>
  KubeApiError.noResponse(
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    request,
    false,
  );

/** An error response as the transport reports it. */
const errorResponse = (code: number, body: Record<string, unknown> | undefined) =>
  KubeApiError.fromResponse(code, body === undefined ? '' : JSON.stringify(body), undefined, request);

/** What the API server answers to a list or watch of a resource it does not serve. */
const notFound = () =>
  errorResponse(404, {
    kind: 'Status',
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
  });

const notServedLine =
  'resource /v1, Resource=configmaps is not served by the API server; retrying until it is';

describe('Reflector', () => {
  it('lists, then watches from the list resourceVersion with a 5-10 min server timeout', async () => {
    const t = setup();
    t.client.scriptList({ items: [configMap('a', '5')], resourceVersion: '10' });
    const watch = await t.client.watchNumber(0);
    assert.deepEqual(t.replaced, [{ names: ['a'], resourceVersion: '10' }]);
    assert.equal(watch.request.resourceVersion, '10');
    assert.equal(watch.request.timeoutSeconds, 300);
    assert.equal(watch.request.inactivityTimeoutMs, 90_000);
    t.abort.abort();
    await t.done;
  });

  it('applies events in order and tracks resourceVersion from events and bookmarks', async () => {
    const t = setup();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    const first = await t.client.watchNumber(0);
    first.push({ type: 'ADDED', object: configMap('a', '11') });
    first.push({ type: 'MODIFIED', object: configMap('a', '12') });
    first.push({ type: 'DELETED', object: configMap('a', '13') });
    await settle();
    assert.deepEqual(
      t.applied.map((e) => `${e.type}:${e.object.metadata?.resourceVersion ?? ''}`),
      ['ADDED:11', 'MODIFIED:12', 'DELETED:13'],
    );
    first.push({
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '20' } },
    });
    await settle();
    assert.equal(t.reflector.lastSyncResourceVersion, '20');
    assert.equal(t.applied.length, 3, 'bookmarks are not delivered as changes');
    // The server ends the watch (timeoutSeconds): re-watch at once from the bookmark, without a relist.
    await t.clock.advance(5_000);
    first.end();
    const second = await t.client.watchNumber(1);
    assert.equal(second.request.resourceVersion, '20');
    assert.equal(t.client.listCalls, 1);
    assert.deepEqual(t.metrics.errors, []);
    assert.deepEqual(t.metrics.started, ['configmaps'], 'reported once, at the start, not per watch');
    t.abort.abort();
    await t.done;
  });

  it('backs off exponentially on network errors and resumes the watch from the last resourceVersion', async () => {
    const t = setup();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    const first = await t.client.watchNumber(0);
    first.push({ type: 'ADDED', object: configMap('a', '11') });
    first.fail(networkError());
    await settle();
    await t.clock.advance(799);
    assert.equal(t.client.watches.length, 1, 'no retry before the 800 ms backoff');
    await t.clock.advance(1);
    const second = await t.client.watchNumber(1);
    assert.equal(second.request.resourceVersion, '11');
    second.fail(networkError());
    await t.clock.advance(1599);
    assert.equal(t.client.watches.length, 2, 'second consecutive failure waits 1600 ms');
    await t.clock.advance(1);
    await t.client.watchNumber(2);
    assert.equal(t.client.listCalls, 1, 'a network error never relists');
    assert.deepEqual(t.metrics.errors, ['configmaps:network', 'configmaps:network']);
    assert.equal(t.errors.length, 2);
    assert.deepEqual(
      t.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message),
      Array(2).fill('watch failed; resuming from the last resourceVersion'),
    );
    t.abort.abort();
    await t.done;
  });

  it('relists on a 410 ERROR event and on an HTTP 410', async () => {
    const t = setup();
    t.client.scriptList({ items: [configMap('a', '5'), configMap('b', '6')], resourceVersion: '10' });
    const first = await t.client.watchNumber(0);
    first.push({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
    });
    await settle();
    assert.deepEqual(t.metrics.errors, ['configmaps:gone']);
    assert.equal(t.metrics.relists, 1);
    t.client.scriptList({ items: [configMap('a', '5')], resourceVersion: '30' });
    await t.clock.advance(800);
    const second = await t.client.watchNumber(1);
    assert.equal(t.client.listCalls, 2);
    assert.deepEqual(t.replaced.at(-1), { names: ['a'], resourceVersion: '30' });
    assert.equal(second.request.resourceVersion, '30');

    second.fail(errorResponse(410, { kind: 'Status', code: 410, reason: 'Gone' }));
    await settle();
    t.client.scriptList({ items: [], resourceVersion: '40' });
    await t.clock.advance(1600);
    const third = await t.client.watchNumber(2);
    assert.equal(third.request.resourceVersion, '40');
    assert.equal(t.metrics.relists, 2);
    t.abort.abort();
    await t.done;
  });

  it('treats non-410 ERROR events as failures to back off from, without a relist', async () => {
    const t = setup();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    const first = await t.client.watchNumber(0);
    first.push({
      type: 'ERROR',
      object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' },
    });
    await settle();
    assert.deepEqual(t.metrics.errors, ['configmaps:server_error']);
    await t.clock.advance(800);
    assert.equal((await t.client.watchNumber(1)).request.resourceVersion, '10');
    assert.equal(t.client.listCalls, 1);
    t.abort.abort();
    await t.done;
  });

  it('retries a failed list with backoff until it succeeds', async () => {
    const t = setup();
    t.client.scriptList(errorResponse(503, undefined));
    t.client.scriptList(errorResponse(403, { kind: 'Status', code: 403, reason: 'Forbidden' }));
    t.client.scriptList({ items: [configMap('a', '1')], resourceVersion: '10' });
    await settle();
    assert.equal(t.client.listCalls, 1);
    await t.clock.advance(800);
    assert.equal(t.client.listCalls, 2);
    await t.clock.advance(1600);
    assert.equal(t.client.listCalls, 3);
    await t.client.watchNumber(0);
    assert.deepEqual(t.metrics.errors, ['configmaps:server_error', 'configmaps:forbidden']);
    assert.deepEqual(
      t.logger.lines.map((l) => l.message),
      ['list failed; retrying', 'list failed; retrying'],
      'a failed first list is not an expired watch',
    );
    assert.equal(t.replaced.length, 1);
    t.abort.abort();
    await t.done;
  });

  it('waits for a resource that is not served: one log line, the list retried with backoff', async () => {
    const t = setup();
    for (let i = 0; i < 3; i++) t.client.scriptList(notFound());
    await settle();
    assert.equal(t.reflector.resourceMissing, true);
    await t.clock.advance(800);
    await t.clock.advance(1600);
    assert.equal(t.client.listCalls, 3);
    assert.deepEqual(t.metrics.errors, Array(3).fill('configmaps:not_found'), 'every retry is counted');
    assert.equal(t.errors.length, 3, 'every retry reaches onError');
    assert.deepEqual(
      t.logger.lines.map((l) => `${l.level} ${l.message}`),
      [`warn ${notServedLine}`],
      'logged once, not once per retry',
    );
    assert.equal(t.metrics.relists, 0, 'not an expired watch');

    t.client.scriptList({ items: [configMap('a', '1')], resourceVersion: '10' });
    await t.clock.advance(3200);
    await t.client.watchNumber(0);
    assert.equal(t.reflector.resourceMissing, false);
    assert.deepEqual(t.replaced, [{ names: ['a'], resourceVersion: '10' }]);
    t.abort.abort();
    await t.done;
  });

  it('repeats the not-served line every 10 minutes while the resource stays missing', async () => {
    const t = setup();
    // One scripted answer per 30 s step: each step is one attempt, whatever the backoff (<= 30 s).
    while (t.clock.now() < 10 * 60_000) {
      t.client.scriptList(notFound());
      await t.clock.advance(30_000);
    }
    assert.equal(t.client.listCalls, 21, '20 failed attempts and one waiting');
    assert.deepEqual(t.metrics.errors.length, 20);
    assert.deepEqual(
      t.logger.lines.map((l) => l.message),
      [notServedLine],
    );
    t.client.scriptList(notFound());
    await settle();
    assert.deepEqual(
      t.logger.lines.map((l) => l.message),
      [notServedLine, notServedLine],
    );
    t.abort.abort();
    await t.done;
  });

  it('relists and logs at once when a served resource goes missing (its CRD deleted)', async () => {
    const t = setup();
    t.client.scriptList({ items: [configMap('a', '1')], resourceVersion: '10' });
    const first = await t.client.watchNumber(0);
    assert.equal(t.reflector.resourceMissing, false);
    first.fail(notFound());
    await settle();
    assert.equal(t.reflector.resourceMissing, true);
    assert.deepEqual(
      t.logger.lines.map((l) => l.message),
      [notServedLine],
    );
    t.client.scriptList({ items: [], resourceVersion: '30' });
    await t.clock.advance(800);
    const second = await t.client.watchNumber(1);
    assert.equal(t.client.listCalls, 2, 'a list, not a watch from the old resourceVersion');
    assert.equal(t.metrics.relists, 1, 'a full list after the initial one');
    assert.equal(second.request.resourceVersion, '30');
    assert.deepEqual(t.replaced.at(-1), { names: [], resourceVersion: '30' });
    assert.equal(t.reflector.resourceMissing, false);
    // Missing once more: a new episode, so the line is not held back by the last one.
    second.fail(notFound());
    await settle();
    assert.equal(t.logger.lines.length, 2);
    // Still missing when the list is retried: one relist, however many attempts it takes.
    t.client.scriptList(notFound());
    await t.clock.advance(1600);
    t.client.scriptList({ items: [], resourceVersion: '40' });
    await t.clock.advance(3200);
    await t.client.watchNumber(2);
    assert.equal(t.client.listCalls, 4);
    assert.equal(t.metrics.relists, 2);
    t.abort.abort();
    await t.done;
  });

  it('honours Retry-After of a 429 as a lower bound on the wait', async () => {
    const t = setup();
    t.client.scriptList(
      errorResponse(429, {
        kind: 'Status',
        code: 429,
        reason: 'TooManyRequests',
        details: { retryAfterSeconds: 5 },
      }),
    );
    t.client.scriptList({ items: [], resourceVersion: '1' });
    await settle();
    await t.clock.advance(4_999);
    assert.equal(t.client.listCalls, 1);
    await t.clock.advance(1);
    assert.equal(t.client.listCalls, 2);
    t.abort.abort();
    await t.done;
  });

  it('counts a watch that the server closes at once without events as a failure', async () => {
    const t = setup();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    (await t.client.watchNumber(0)).end();
    await settle();
    assert.deepEqual(t.metrics.errors, ['configmaps:short_watch']);
    assert.equal(t.client.watches.length, 1, 'no immediate reconnect storm');
    await t.clock.advance(800);
    await t.client.watchNumber(1);
    t.abort.abort();
    await t.done;
  });

  it('keeps going when the logger, metrics and onError hooks throw', async () => {
    const clock = new FakeClock();
    const client = new ScriptedClient<KubeObject>();
    const boom = (): never => {
      throw new Error('hook failed');
    };
    const reflector = new Reflector<KubeObject>({
      client,
      clock,
      sink: { replace: () => undefined, apply: () => undefined },
      logger: { debug: boom, warn: boom, error: boom },
      metrics: { watchError: boom, relist: boom },
      onError: boom,
      backoff: { random: () => 0 },
    });
    const abort = new AbortController();
    const done = reflector.run(abort.signal);
    client.scriptList({ items: [], resourceVersion: '1' });
    (await client.watchNumber(0)).fail(networkError());
    await clock.advance(800);
    await client.watchNumber(1);
    abort.abort();
    await done;
  });

  it('stops quietly on abort: no error reported, run resolves, nothing delivered afterwards', async () => {
    const t = setup();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    const watch = await t.client.watchNumber(0);
    t.abort.abort();
    watch.push({ type: 'ADDED', object: configMap('late', '11') });
    await t.done;
    await settle();
    assert.deepEqual(t.applied, []);
    assert.deepEqual(t.metrics.errors, []);
    assert.deepEqual(t.errors, []);
  });

  it('stops quietly while backing off', async () => {
    const t = setup();
    t.client.scriptList(networkError());
    await settle();
    assert.equal(t.clock.pendingTimers(), 1, 'sleeping');
    t.abort.abort();
    await t.done;
    assert.equal(t.clock.pendingTimers(), 0, 'backoff timer cleared');
    assert.equal(t.client.listCalls, 1);
  });
});
