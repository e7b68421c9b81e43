import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from '@loopwright/client';
import { Reflector, type ObjectEvent } from './reflector.ts';
import { FakeClock, settle } from '@loopwright/core/testing';
import { configMap, recordingLogger, ScriptedClient } from './scripted-client.test-support.ts';
import type { KubeObject } from '@loopwright/client';
import type { InitialSync } from './streaming-list.ts';

/** The reflector under test; `initialSync` defaults to `list`, which most of these tests are about. */
function setup(options: { random?: () => number; initialSync?: InitialSync } = {}) {
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
    initialSync: options.initialSync ?? 'list',
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
      initialSync: 'list',
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

/** The BOOKMARK that ends a streaming list's initial events. */
const endOfInitialEvents = (resourceVersion: string) =>
  ({
    type: 'BOOKMARK',
    object: {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
    },
  }) as const;

/** What kube-apiserver 1.36 with `--feature-gates=WatchList=false` answers a streaming list (its exact Status). */
const watchListForbidden = () =>
  errorResponse(422, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message:
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
    reason: 'Invalid',
    details: {
      group: 'meta.k8s.io',
      kind: 'ListOptions',
      causes: [
        {
          reason: 'FieldValueForbidden',
          message:
            'Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
          field: 'sendInitialEvents',
        },
      ],
    },
    code: 422,
  });

const fallbackLine = 'the API server does not do streaming lists (WatchList); listing instead';

describe('Reflector with streaming lists (watch-list)', () => {
  it('asks for the initial events from the newest state and replaces the sink once, at their end bookmark', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const stream = await t.client.watchNumber(0);
    assert.equal(stream.request.sendInitialEvents, true);
    assert.equal(stream.request.resourceVersion, '', 'a consistent read of the newest state, as a list');
    assert.equal(stream.request.timeoutSeconds, 300);
    stream.push({ type: 'ADDED', object: configMap('a', '5') });
    stream.push({ type: 'ADDED', object: configMap('b', '7') });
    stream.push({ type: 'ADDED', object: configMap('c', '6') });
    await settle();
    assert.equal(t.replaced.length, 0, 'nothing reaches the sink before the end of the initial events');
    assert.equal(t.applied.length, 0);
    assert.equal(
      t.reflector.lastSyncResourceVersion,
      undefined,
      'initial events carry no collection version',
    );
    stream.push(endOfInitialEvents('10'));
    await settle();
    assert.deepEqual(t.replaced, [{ names: ['a', 'b', 'c'], resourceVersion: '10' }]);
    assert.equal(t.reflector.lastSyncResourceVersion, '10');
    // The same watch goes on: changes are applied as they come, no other request is made.
    stream.push({ type: 'MODIFIED', object: configMap('a', '11') });
    await settle();
    assert.deepEqual(
      t.applied.map((e) => `${e.type}:${e.object.metadata?.name ?? ''}`),
      ['MODIFIED:a'],
    );
    assert.equal(t.reflector.lastSyncResourceVersion, '11');
    assert.equal(t.client.watches.length, 1);
    assert.equal(t.client.listCalls, 0);
    // When the server ends it, the next watch is a plain one from the last resourceVersion.
    await t.clock.advance(5_000);
    stream.end();
    const next = await t.client.watchNumber(1);
    assert.equal(next.request.sendInitialEvents, undefined);
    assert.equal(next.request.resourceVersion, '11');
    assert.deepEqual(t.metrics.errors, []);
    t.abort.abort();
    await t.done;
  });

  it('applies changes that come before the end bookmark to the initial state, not to the sink', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const stream = await t.client.watchNumber(0);
    stream.push({ type: 'ADDED', object: configMap('a', '5') });
    stream.push({ type: 'ADDED', object: configMap('b', '6') });
    stream.push({ type: 'MODIFIED', object: configMap('a', '8') });
    stream.push({ type: 'DELETED', object: configMap('b', '9') });
    stream.push({ type: 'ADDED', object: configMap('c', '10') });
    stream.push(endOfInitialEvents('10'));
    await settle();
    assert.deepEqual(t.applied, []);
    assert.equal(t.replaced.length, 1);
    assert.deepEqual(t.replaced[0], { names: ['a', 'c'], resourceVersion: '10' });
    t.abort.abort();
    await t.done;
  });

  it('relists after 410 by a streaming list, from the newest state', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const first = await t.client.watchNumber(0);
    first.push({ type: 'ADDED', object: configMap('a', '5') });
    first.push(endOfInitialEvents('10'));
    first.push({ type: 'MODIFIED', object: configMap('a', '12') });
    first.push({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
    });
    await settle();
    assert.equal(t.metrics.relists, 1);
    await t.clock.advance(800);
    const relist = await t.client.watchNumber(1);
    assert.equal(relist.request.sendInitialEvents, true);
    assert.equal(relist.request.resourceVersion, '', 'not the expired one');
    relist.push({ type: 'ADDED', object: configMap('b', '20') });
    relist.push(endOfInitialEvents('30'));
    await settle();
    assert.deepEqual(t.replaced.at(-1), { names: ['b'], resourceVersion: '30' });
    assert.equal(t.client.listCalls, 0);
    t.abort.abort();
    await t.done;
  });

  it('retries a streaming list cut short with backoff, as a streaming list, from scratch', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const first = await t.client.watchNumber(0);
    first.push({ type: 'ADDED', object: configMap('a', '5') });
    first.fail(networkError());
    await settle();
    assert.deepEqual(t.metrics.errors, ['configmaps:network']);
    assert.deepEqual(
      t.logger.lines.map((l) => `${l.level} ${l.message}`),
      ['warn list failed; retrying'],
    );
    await t.clock.advance(799);
    assert.equal(t.client.watches.length, 1, 'backed off');
    await t.clock.advance(1);
    const second = await t.client.watchNumber(1);
    assert.equal(second.request.sendInitialEvents, true, 'a network failure is not a refusal');
    // The server ends this one before its end bookmark (a restart, its timeout): retried the same way.
    second.push({ type: 'ADDED', object: configMap('b', '6') });
    second.end();
    await settle();
    assert.deepEqual(t.metrics.errors, ['configmaps:network', 'configmaps:network']);
    await t.clock.advance(1600);
    const third = await t.client.watchNumber(2);
    assert.equal(third.request.sendInitialEvents, true);
    third.push({ type: 'ADDED', object: configMap('c', '7') });
    third.push(endOfInitialEvents('10'));
    await settle();
    assert.deepEqual(t.replaced, [{ names: ['c'], resourceVersion: '10' }], 'nothing of the broken streams');
    assert.equal(t.client.listCalls, 0);
    t.abort.abort();
    await t.done;
  });

  it('falls back to lists at once, and for good, when the server refuses streaming lists (422)', async () => {
    const t = setup({ initialSync: 'watch-list' });
    (await t.client.watchNumber(0)).fail(watchListForbidden());
    t.client.scriptList({ items: [configMap('a', '5')], resourceVersion: '10' });
    await settle();
    assert.equal(t.client.listCalls, 1, 'listed without waiting');
    assert.deepEqual(t.replaced, [{ names: ['a'], resourceVersion: '10' }]);
    const watch = await t.client.watchNumber(1);
    assert.equal(watch.request.sendInitialEvents, undefined);
    assert.equal(watch.request.resourceVersion, '10');
    assert.deepEqual(t.metrics.errors, [], 'a refusal is no failure');
    assert.deepEqual(t.errors, []);
    assert.deepEqual(
      t.logger.lines.map((l) => `${l.level} ${l.message} ${String(l.fields?.statusCode)}`),
      [`debug ${fallbackLine} 422`],
    );
    // A later relist lists too: the server said no once.
    watch.fail(errorResponse(410, { kind: 'Status', code: 410, reason: 'Gone' }));
    t.client.scriptList({ items: [], resourceVersion: '20' });
    await settle();
    await t.clock.advance(800);
    const after = await t.client.watchNumber(2);
    assert.equal(after.request.resourceVersion, '20');
    assert.equal(t.client.listCalls, 2);
    assert.equal(t.client.watches.filter((w) => w.request.sendInitialEvents === true).length, 1);
    assert.equal(t.logger.lines.filter((l) => l.message === fallbackLine).length, 1, 'told once');
    t.abort.abort();
    await t.done;
  });

  it('falls back to lists when the server ignores sendInitialEvents (a plain bookmark before the end one)', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const stream = await t.client.watchNumber(0);
    // An API server older than 1.19 watches from the newest state as it would without the parameters.
    stream.push({ type: 'ADDED', object: configMap('a', '5') });
    stream.push({
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '10' } },
    });
    t.client.scriptList({ items: [configMap('a', '5'), configMap('b', '6')], resourceVersion: '12' });
    await settle();
    assert.equal(t.client.listCalls, 1);
    assert.deepEqual(t.replaced, [{ names: ['a', 'b'], resourceVersion: '12' }]);
    assert.deepEqual(t.metrics.errors, []);
    assert.deepEqual(
      t.logger.lines.map((l) => `${l.level} ${l.message}`),
      [`debug ${fallbackLine}`],
    );
    assert.equal((await t.client.watchNumber(1)).request.sendInitialEvents, undefined);
    t.abort.abort();
    await t.done;
  });

  it('does not take a 422 on a watch after the sync for a refusal', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const stream = await t.client.watchNumber(0);
    stream.push(endOfInitialEvents('10'));
    stream.push({ type: 'ERROR', object: { kind: 'Status', code: 422, reason: 'Invalid', message: 'no' } });
    await settle();
    assert.deepEqual(t.metrics.errors, ['configmaps:http_error']);
    await t.clock.advance(800);
    assert.equal((await t.client.watchNumber(1)).request.resourceVersion, '10');
    assert.equal(t.client.listCalls, 0);
    assert.equal(
      t.logger.lines.some((l) => l.message === fallbackLine),
      false,
    );
    t.abort.abort();
    await t.done;
  });

  it('stops quietly in the middle of the initial events', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const stream = await t.client.watchNumber(0);
    stream.push({ type: 'ADDED', object: configMap('a', '5') });
    await settle();
    t.abort.abort();
    stream.push(endOfInitialEvents('10'));
    await t.done;
    await settle();
    assert.deepEqual(t.replaced, []);
    assert.deepEqual(t.metrics.errors, []);
  });
});
