import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { KubeApiError, isGone } from '@loopwright/client';
import { HandlerError, InformerStoppedError } from './errors.ts';
import { labelIndex, objectKey } from './indexers.ts';
import { Informer, type EventHandlers } from './informer.ts';
import { stripManagedFields } from './strip-managed-fields.ts';
import { FakeClock, settle } from '@loopwright/core/testing';
import { configMap, recordingLogger, ScriptedClient } from './scripted-client.test-support.ts';
import { collectGarbage, sameHeapObject } from './v8-internals.test-support.ts';
import type { KubeObject } from '@loopwright/client';
import type { InitialSync } from './streaming-list.ts';

/** The BOOKMARK that ends a streaming list's initial events. */
const endOfInitialEvents = (resourceVersion: string) =>
  ({
    type: 'BOOKMARK',
    object: { metadata: { resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } } },
  }) as const;

type Cm = KubeObject & { data?: Record<string, string> };

function recorder(): { events: string[]; handlers: EventHandlers<Cm> } {
  const events: string[] = [];
  return {
    events,
    handlers: {
      onAdd: (obj, initial) =>
        events.push(
          `add ${objectKey(obj)}@${obj.metadata?.resourceVersion ?? ''}${initial ? ' initial' : ''}`,
        ),
      onUpdate: (oldObj, newObj) =>
        events.push(
          `update ${objectKey(newObj)}@${oldObj.metadata?.resourceVersion ?? ''}->${newObj.metadata?.resourceVersion ?? ''}`,
        ),
      onDelete: (obj, { finalStateUnknown }) =>
        events.push(
          `delete ${objectKey(obj)}@${obj.metadata?.resourceVersion ?? ''}${finalStateUnknown ? ' unknown' : ''}`,
        ),
    },
  };
}

function setup(
  options: {
    resyncMs?: number;
    freezeObjects?: boolean;
    transform?: (obj: Cm) => Cm;
    initialSync?: InitialSync;
  } = {},
) {
  const clock = new FakeClock();
  const client = new ScriptedClient<Cm>();
  const logger = recordingLogger();
  const errors: Error[] = [];
  const informer = new Informer<Cm>({
    resourceClient: client,
    clock,
    logger,
    onError: (error) => errors.push(error),
    backoff: { random: () => 0 },
    indexers: { byApp: labelIndex('app') },
    initialSync: 'list',
    ...options,
  });
  return { clock, client, logger, errors, informer };
}

describe('Informer', () => {
  let unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeEach(() => {
    unhandled = [];
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('delivers the first list as initial adds, then syncs', async () => {
    const t = setup();
    const rec = recorder();
    t.informer.addEventHandler(rec.handlers);
    t.informer.start();
    const synced = t.informer.waitForSync();
    assert.equal(t.informer.hasSynced(), false);
    t.client.scriptList({
      items: [configMap('a', '1'), configMap('b', '2', { labels: { app: 'web' } })],
      resourceVersion: '10',
    });
    await synced;
    assert.equal(t.informer.hasSynced(), true);
    assert.deepEqual(rec.events, ['add default/a@1 initial', 'add default/b@2 initial']);
    assert.equal(t.informer.lister.get('default', 'b')?.metadata?.resourceVersion, '2');
    assert.deepEqual(t.informer.lister.byIndex('byApp', 'web').map(objectKey), ['default/b']);
    assert.equal(t.informer.lastSyncResourceVersion, '10');
    t.informer.stop();
  });

  it('turns watch events into add/update/delete with the cache updated before handlers run', async () => {
    const t = setup();
    const seenInCache: (string | undefined)[] = [];
    const rec = recorder();
    t.informer.addEventHandler(rec.handlers);
    t.informer.addEventHandler({
      onUpdate: (_old, obj) =>
        seenInCache.push(
          t.informer.lister.get('default', obj.metadata?.name ?? '')?.metadata?.resourceVersion,
        ),
    });
    t.informer.start();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    const watch = await t.client.watchNumber(0);
    watch.push({ type: 'ADDED', object: configMap('a', '11') });
    watch.push({ type: 'MODIFIED', object: configMap('a', '12') });
    watch.push({ type: 'DELETED', object: configMap('a', '13') });
    await settle();
    assert.deepEqual(rec.events, ['add default/a@11', 'update default/a@11->12', 'delete default/a@13']);
    assert.deepEqual(seenInCache, ['12']);
    assert.equal(t.informer.lister.get('default', 'a'), undefined);
    t.informer.stop();
  });

  it('on relist after 410 delivers adds, updates for changed objects only, and finalStateUnknown deletes', async () => {
    const t = setup();
    const rec = recorder();
    t.informer.addEventHandler(rec.handlers);
    t.informer.start();
    t.client.scriptList({
      items: [
        configMap('same', '1'),
        configMap('changed', '2'),
        configMap('gone', '3', { labels: { app: 'web' } }),
      ],
      resourceVersion: '10',
    });
    const watch = await t.client.watchNumber(0);
    rec.events.length = 0;
    watch.push({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' },
    });
    t.client.scriptList({
      items: [configMap('same', '1'), configMap('changed', '7'), configMap('new', '8')],
      resourceVersion: '20',
    });
    await t.clock.advance(800);
    await t.client.watchNumber(1);
    assert.deepEqual(rec.events.sort(), [
      'add default/new@8',
      'delete default/gone@3 unknown',
      'update default/changed@2->7',
    ]);
    assert.deepEqual(t.informer.lister.list().map(objectKey).sort(), [
      'default/changed',
      'default/new',
      'default/same',
    ]);
    assert.deepEqual(t.informer.lister.byIndex('byApp', 'web'), [], 'indexes follow the relist');
    assert.equal(t.errors.length, 1);
    assert.ok(t.errors[0] instanceof KubeApiError);
    assert.ok(isGone(t.errors[0]));
    t.informer.stop();
  });

  it('isolates throwing and rejecting handlers: others keep receiving, no unhandled rejection', async () => {
    const t = setup();
    const rec = recorder();
    t.informer.addEventHandler({
      onAdd: () => {
        throw new Error('sync boom');
      },
    });
    t.informer.addEventHandler({ onAdd: () => Promise.reject(new Error('async boom')) });
    t.informer.addEventHandler({
      onAdd: async () => {
        await Promise.resolve();
        throw new Error('await boom');
      },
    });
    t.informer.addEventHandler(rec.handlers);
    t.informer.start();
    t.client.scriptList({ items: [configMap('a', '1')], resourceVersion: '10' });
    await t.informer.waitForSync();
    const watch = await t.client.watchNumber(0);
    watch.push({ type: 'ADDED', object: configMap('b', '11') });
    await settle();
    assert.deepEqual(rec.events, ['add default/a@1 initial', 'add default/b@11']);
    const handlerErrors = t.errors.filter((e) => e instanceof HandlerError);
    assert.equal(handlerErrors.length, 6);
    assert.deepEqual(
      new Set(handlerErrors.map((e) => (e.cause as Error).message)),
      new Set(['sync boom', 'async boom', 'await boom']),
    );
    assert.equal(t.logger.lines.filter((l) => l.level === 'error').length, 6);
    assert.deepEqual(unhandled, []);
    t.informer.stop();
  });

  it('gives a handler added after sync the current content as initial adds', async () => {
    const t = setup();
    t.informer.start();
    t.client.scriptList({ items: [configMap('a', '1'), configMap('b', '2')], resourceVersion: '10' });
    await t.informer.waitForSync();
    const rec = recorder();
    t.informer.addEventHandler(rec.handlers);
    assert.deepEqual(rec.events.sort(), ['add default/a@1 initial', 'add default/b@2 initial']);
    const watch = await t.client.watchNumber(0);
    watch.push({ type: 'MODIFIED', object: configMap('a', '3') });
    await settle();
    assert.equal(rec.events.at(-1), 'update default/a@1->3');
    t.informer.stop();
  });

  it('stops delivering to a removed handler', async () => {
    const t = setup();
    const rec = recorder();
    const registration = t.informer.addEventHandler(rec.handlers);
    t.informer.start();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    const watch = await t.client.watchNumber(0);
    registration.remove();
    watch.push({ type: 'ADDED', object: configMap('a', '11') });
    await settle();
    assert.deepEqual(rec.events, []);
    t.informer.stop();
  });

  it('resyncs every cached object as onUpdate(obj, obj) once synced', async () => {
    const t = setup({ resyncMs: 30_000 });
    const rec = recorder();
    t.informer.addEventHandler(rec.handlers);
    t.informer.start();
    await t.clock.advance(30_000);
    assert.deepEqual(rec.events, [], 'nothing to resync before the first list');
    t.client.scriptList({ items: [configMap('a', '1')], resourceVersion: '10' });
    await t.informer.waitForSync();
    rec.events.length = 0;
    await t.clock.advance(30_000);
    assert.deepEqual(rec.events, ['update default/a@1->1']);
    await t.clock.advance(30_000);
    assert.equal(rec.events.length, 2);
    t.informer.stop();
    await t.clock.advance(60_000);
    assert.equal(rec.events.length, 2);
  });

  it('stop() is quiet: no callbacks, no errors, pending waitForSync rejects', async () => {
    const t = setup();
    const rec = recorder();
    t.informer.addEventHandler(rec.handlers);
    t.informer.start();
    const pending = t.informer.waitForSync();
    t.informer.stop();
    await assert.rejects(pending, InformerStoppedError);
    t.client.scriptList({ items: [configMap('a', '1')], resourceVersion: '10' });
    await settle();
    assert.deepEqual(rec.events, []);
    assert.deepEqual(t.errors, []);
    assert.equal(t.logger.lines.length, 0);
    assert.throws(() => {
      t.informer.start();
    }, InformerStoppedError);
  });

  it('waitForSync rejects when its signal aborts', async () => {
    const t = setup();
    t.informer.start();
    const abort = new AbortController();
    const pending = t.informer.waitForSync(abort.signal);
    abort.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    t.informer.stop();
  });

  it('waitForSync rejects, rather than throws, when its signal has already aborted', async () => {
    const t = setup();
    t.informer.start();
    const reason = new Error('gave up');
    let pending: Promise<void> | undefined;
    assert.doesNotThrow(() => {
      pending = t.informer.waitForSync(AbortSignal.abort(reason));
    });
    await assert.rejects(pending ?? Promise.resolve(), (error) => error === reason);
    t.informer.stop();
  });

  it('freezes cached objects when asked, so mutation throws', async () => {
    const t = setup({ freezeObjects: true });
    t.informer.start();
    t.client.scriptList({ items: [configMap('a', '1', { data: { k: 'v' } })], resourceVersion: '10' });
    await t.informer.waitForSync();
    const cached = t.informer.lister.get('default', 'a');
    assert.ok(cached?.data !== undefined);
    const data = cached.data;
    assert.throws(() => {
      data.k = 'mutated';
    }, TypeError);
    t.informer.stop();
  });

  it('caches objects that share their namespace string, also after a transform', async () => {
    const t = setup({ transform: (obj) => ({ ...obj, data: {} }) });
    t.informer.start();
    // Decoded like an API response: each object has its own copy of every string.
    const decoded = (name: string, rv: string): Cm =>
      JSON.parse(JSON.stringify(configMap(name, rv, { namespace: 'production-apps' }))) as Cm;
    t.client.scriptList({ items: [decoded('a', '1')], resourceVersion: '10' });
    await t.informer.waitForSync();
    (await t.client.watchNumber(0)).push({ type: 'ADDED', object: decoded('b', '11') });
    await settle();
    const namespaces = t.informer.lister.list().map((obj) => obj.metadata?.namespace);
    assert.deepEqual(namespaces, ['production-apps', 'production-apps']);
    assert.ok(sameHeapObject(namespaces[0], namespaces[1]));
    t.informer.stop();
  });

  it('applies a transform before caching', async () => {
    const t = setup({ transform: stripManagedFields });
    t.informer.start();
    const withManaged = configMap('a', '1');
    (withManaged.metadata as Record<string, unknown>).managedFields = [{ manager: 'kubectl' }];
    t.client.scriptList({ items: [withManaged], resourceVersion: '10' });
    await t.informer.waitForSync();
    assert.equal(t.informer.lister.get('default', 'a')?.metadata?.managedFields, undefined);
    t.informer.stop();
  });

  it('holds no listed object that its transform replaced, once the list is cached and the watch runs', async () => {
    const decoded: WeakRef<Cm>[] = [];
    const t = setup({
      transform: (obj) => {
        decoded.push(new WeakRef(obj));
        return { metadata: { ...obj.metadata } };
      },
    });
    t.informer.start();
    t.client.scriptList({ items: [configMap('a', '1'), configMap('b', '2')], resourceVersion: '10' });
    await t.informer.waitForSync();
    await t.client.watchNumber(0);
    // A WeakRef keeps its target alive until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    assert.equal(decoded.length, 2);
    assert.deepEqual(
      decoded.map((ref) => ref.deref()?.metadata?.name),
      [undefined, undefined],
      'the decoded list is garbage: only the transformed objects stay',
    );
    assert.equal(t.informer.lister.list().length, 2);
    t.informer.stop();
  });

  it('delivers a streaming list as a list: initial adds at its end, then the relist diff after 410', async () => {
    const t = setup({ initialSync: 'watch-list' });
    const rec = recorder();
    t.informer.addEventHandler(rec.handlers);
    t.informer.start();
    const stream = await t.client.watchNumber(0);
    stream.push({ type: 'ADDED', object: configMap('same', '1') });
    stream.push({ type: 'ADDED', object: configMap('changed', '2') });
    stream.push({ type: 'ADDED', object: configMap('gone', '3', { labels: { app: 'web' } }) });
    await settle();
    assert.deepEqual(rec.events, [], 'not delivered one by one as live events');
    assert.equal(t.informer.hasSynced(), false);
    assert.equal(t.informer.lister.list().length, 0);
    stream.push(endOfInitialEvents('10'));
    await t.informer.waitForSync();
    assert.deepEqual(rec.events, [
      'add default/same@1 initial',
      'add default/changed@2 initial',
      'add default/gone@3 initial',
    ]);
    rec.events.length = 0;
    stream.push({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' },
    });
    await settle();
    await t.clock.advance(800);
    const relist = await t.client.watchNumber(1);
    relist.push({ type: 'ADDED', object: configMap('same', '1') });
    relist.push({ type: 'ADDED', object: configMap('changed', '7') });
    relist.push({ type: 'ADDED', object: configMap('new', '8') });
    await settle();
    assert.deepEqual(rec.events, []);
    relist.push(endOfInitialEvents('20'));
    await settle();
    assert.deepEqual(rec.events.sort(), [
      'add default/new@8',
      'delete default/gone@3 unknown',
      'update default/changed@2->7',
    ]);
    assert.deepEqual(t.informer.lister.byIndex('byApp', 'web'), []);
    t.informer.stop();
  });

  it('holds no streamed object once the initial events are cached and the watch goes on', async () => {
    const decoded: WeakRef<Cm>[] = [];
    const t = setup({
      initialSync: 'watch-list',
      transform: (obj) => {
        decoded.push(new WeakRef(obj));
        return { metadata: { ...obj.metadata } };
      },
    });
    t.informer.start();
    const stream = await t.client.watchNumber(0);
    stream.push({ type: 'ADDED', object: configMap('a', '1') });
    stream.push({ type: 'ADDED', object: configMap('b', '2') });
    stream.push(endOfInitialEvents('10'));
    await t.informer.waitForSync();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    assert.equal(decoded.length, 2);
    assert.deepEqual(
      decoded.map((ref) => ref.deref()?.metadata?.name),
      [undefined, undefined],
      'the initial events are garbage though the watch that brought them goes on',
    );
    assert.equal(t.informer.lister.list().length, 2);
    t.informer.stop();
  });
});
