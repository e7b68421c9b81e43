/**
 * The handle (`client.resource(type)`) against the real API server of the test run: each call, its
 * preconditions and options as the server applies them, on a namespaced built-in kind, on custom
 * resources with the status subresource (namespaced and cluster-scoped), and in protobuf.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeApiError } from './api-error.ts';
import { isAlreadyExists, isConflict, isInvalid, isNotFound } from './classify.ts';
import { KubeClient } from './client.ts';
import type { KubeObject, WatchEvent } from './object.ts';
import { PODS, TEST_POD_CODEC, testPod, type TestPod } from './pod-codec.test-support.ts';
import { encodeObject, type MessageSchema } from './protobuf-encode.ts';
import {
  createTestNamespace,
  createWidgetCrd,
  loadTestKubeConfig,
  NAMESPACES,
  uniqueName,
  type TestNamespace,
} from './real-server.test-support.ts';
import type { Resource } from './resource.ts';
import type { ResourceType } from './resource-type.ts';

const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string };
}

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  subresource?: string;
  fieldsV1: Record<string, Record<string, unknown>>;
}

const kc = loadTestKubeConfig();
/** No default fieldManager: each write names its own, and apply without one is refused. */
const client = new KubeClient(kc, { rateLimit: false });
const configMaps = client.resource<ConfigMap>(CONFIG_MAPS);
let ns: TestNamespace;
let widgets: Resource<Widget>;
let clusterWidgets: Resource<Widget>;
const cleanups: (() => Promise<unknown>)[] = [];

before(async () => {
  ns = await createTestNamespace(client, 'resource');
  cleanups.push(() => ns.cleanup());
  const [namespaced, clusterScoped] = await Promise.all([
    createWidgetCrd(client, 'Namespaced'),
    createWidgetCrd(client, 'Cluster'),
  ]);
  cleanups.push(
    () => namespaced.cleanup(),
    () => clusterScoped.cleanup(),
  );
  widgets = client.resource<Widget>(namespaced.type);
  clusterWidgets = client.resource<Widget>(clusterScoped.type);
});

after(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
  await client.close();
});

/** The error a call rejected with; fails when it resolved. */
async function failure(call: Promise<unknown>): Promise<KubeApiError> {
  return call.then(
    (value: unknown) => assert.fail(`resolved with ${JSON.stringify(value)}`),
    (error: unknown) => error as KubeApiError,
  );
}

/** A ConfigMap of the test namespace, created. */
async function configMap(name: string, data: Record<string, string> = {}): Promise<ConfigMap> {
  return configMaps.create({ metadata: { namespace: ns.name, name }, data });
}

/** Fields of `manager`'s managedFields entry (of `subresource`, default the main resource). */
function fieldsOf(object: KubeObject, manager: string, subresource?: string): Record<string, unknown> {
  const entries = (object.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
  const entry = entries.find((e) => e.manager === manager && e.subresource === subresource);
  return entry?.fieldsV1 ?? {};
}

/** Events of a watch until `done` says the last one is in, or 20 s. */
async function watchUntil<K extends KubeObject>(
  events: AsyncIterable<WatchEvent<K>>,
  abort: AbortController,
  done: (events: WatchEvent<K>[]) => boolean,
): Promise<WatchEvent<K>[]> {
  const seen: WatchEvent<K>[] = [];
  const timer = setTimeout(() => {
    abort.abort();
  }, 20_000);
  try {
    for await (const event of events) {
      seen.push(event);
      if (done(seen)) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return seen;
}

/** `TYPE name` of an event. */
function named(event: WatchEvent<KubeObject>): string {
  return `${event.type} ${(event.object as KubeObject).metadata?.name ?? ''}`;
}

describe('get and getOptional', () => {
  it('read the object; a missing one is NotFound for get, undefined for getOptional', async () => {
    const created = await configMap('read-me', { a: '1' });
    const read = await configMaps.get({ namespace: ns.name, name: 'read-me' });
    assert.deepEqual(read.data, { a: '1' });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    assert.equal(read.apiVersion, 'v1');
    assert.equal(read.kind, 'ConfigMap');
    assert.equal((await configMaps.getOptional({ namespace: ns.name, name: 'read-me' }))?.data?.a, '1');
    assert.equal(await configMaps.getOptional({ namespace: ns.name, name: 'absent' }), undefined);
    const missing = await failure(configMaps.get({ namespace: ns.name, name: 'absent' }));
    assert.equal(isNotFound(missing), true);
  });

  it('getOptional rejects on any other error', async () => {
    const error = await failure(
      configMaps.getOptional({ namespace: ns.name, name: 'read-me' }, { signal: AbortSignal.abort() }),
    );
    assert.equal(error.failure, 'aborted');
  });

  it('refuses a key that does not fit the resource, sending nothing', async () => {
    const before = client.stats().requests;
    await assert.rejects(configMaps.get({ name: 'x' }), {
      name: 'TypeError',
      message: 'configmaps is namespaced: the object key needs a namespace',
    });
    await assert.rejects(configMaps.get({ namespace: '', name: 'x' }), { name: 'TypeError' });
    await assert.rejects(configMaps.get({ namespace: ns.name, name: '' }), {
      name: 'TypeError',
      message: 'configmaps: an object key needs a name',
    });
    await assert.rejects(clusterWidgets.get({ namespace: ns.name, name: 'x' }), {
      name: 'TypeError',
      message: /is cluster-scoped: the object key has no namespace/,
    });
    await assert.rejects(configMaps.create({ metadata: { name: 'no-namespace' } }), { name: 'TypeError' });
    await assert.rejects(configMaps.update({ metadata: { namespace: ns.name } }), {
      name: 'TypeError',
      message: 'the object has no metadata.name',
    });
    await assert.rejects(configMaps.status.list(), { name: 'TypeError', message: /has no collection/ });
    assert.throws(() => configMaps.status.subresource('x'), { name: 'TypeError' });
    assert.equal(client.stats().requests, before);
  });
});

describe('list', () => {
  const label = 'loopwright.dev/list-test';
  before(async () => {
    for (const name of ['l-1', 'l-2', 'l-3']) {
      await configMaps.create({ metadata: { namespace: ns.name, name, labels: { [label]: name } } });
    }
    await configMap('l-unlabelled');
  });

  it('lists the namespace with the items apiVersion and kind, filtered by a label selector', async () => {
    const page = await configMaps.list({ namespace: ns.name, labelSelector: label });
    assert.deepEqual(page.items.map((item) => item.metadata?.name).sort(), ['l-1', 'l-2', 'l-3']);
    assert.ok(page.items.every((item) => item.apiVersion === 'v1' && item.kind === 'ConfigMap'));
    assert.match(page.resourceVersion, /^\d+$/);
    assert.equal(page.continue, '');
    const two = await configMaps.list({ namespace: ns.name, labelSelector: `${label} in (l-1,l-3)` });
    assert.deepEqual(two.items.map((item) => item.metadata?.name).sort(), ['l-1', 'l-3']);
    const byField = await configMaps.list({ namespace: ns.name, fieldSelector: 'metadata.name=l-2' });
    assert.deepEqual(
      byField.items.map((item) => item.metadata?.name),
      ['l-2'],
    );
  });

  it('pages with limit and continue', async () => {
    const first = await configMaps.list({ namespace: ns.name, labelSelector: label, limit: 2 });
    assert.equal(first.items.length, 2);
    assert.notEqual(first.continue, '');
    const second = await configMaps.list({
      namespace: ns.name,
      labelSelector: label,
      limit: 2,
      continue: first.continue,
    });
    assert.equal(second.continue, '');
    assert.equal(second.resourceVersion, first.resourceVersion, 'one consistent snapshot');
    assert.deepEqual([...first.items, ...second.items].map((item) => item.metadata?.name).sort(), [
      'l-1',
      'l-2',
      'l-3',
    ]);
  });

  it('lists across namespaces without one, and at a resourceVersion', async () => {
    const all = await configMaps.list({ labelSelector: label });
    assert.deepEqual(
      all.items.map((item) => item.metadata?.namespace),
      [ns.name, ns.name, ns.name],
    );
    const cached = await configMaps.list({
      labelSelector: label,
      resourceVersion: all.resourceVersion,
      resourceVersionMatch: 'NotOlderThan',
    });
    assert.equal(cached.items.length, 3);
    const before = await configMaps.list({
      labelSelector: label,
      resourceVersion: '1',
      resourceVersionMatch: 'Exact',
    });
    assert.deepEqual([before.items, before.resourceVersion], [[], '1'], 'the snapshot of that version');
  });
});

describe('watch', () => {
  it('yields ADDED, MODIFIED and DELETED of the selected objects, and ends when its signal aborts', async () => {
    const label = 'loopwright.dev/watch-test';
    const start = await configMaps.list({ namespace: ns.name });
    const abort = new AbortController();
    const events = configMaps.watch({
      namespace: ns.name,
      labelSelector: label,
      resourceVersion: start.resourceVersion,
      signal: abort.signal,
    });
    const seen = watchUntil(events, abort, (list) => list.filter((e) => e.type !== 'BOOKMARK').length === 3);
    await configMaps.create({ metadata: { namespace: ns.name, name: 'w', labels: { [label]: 'x' } } });
    await configMap('w-unlabelled');
    await configMaps.patch({ namespace: ns.name, name: 'w' }, { merge: { data: { b: '2' } } });
    await configMaps.delete({ namespace: ns.name, name: 'w' });
    const got = (await seen).filter((event) => event.type !== 'BOOKMARK');
    assert.deepEqual(got.map(named), ['ADDED w', 'MODIFIED w', 'DELETED w']);
    assert.deepEqual((got[1]?.object as ConfigMap).data, { b: '2' });

    // An abort ends a watch waiting for its next event quietly.
    const quiet = new AbortController();
    const waiting = configMaps.watch({
      namespace: ns.name,
      labelSelector: label,
      resourceVersion: start.resourceVersion,
      signal: quiet.signal,
    });
    const until = watchUntil(waiting, quiet, () => false);
    setTimeout(() => {
      quiet.abort();
    }, 200);
    assert.deepEqual((await until).map(named), ['ADDED w', 'MODIFIED w', 'DELETED w']);
  });

  it('without a resourceVersion: the objects as ADDED, then a bookmark (unless asked not to); ends at timeoutSeconds', async () => {
    const label = 'loopwright.dev/bookmark-test';
    await configMaps.create({ metadata: { namespace: ns.name, name: 'bm', labels: { [label]: 'x' } } });
    const watchAll = async (allowWatchBookmarks: boolean): Promise<string[]> => {
      const events: string[] = [];
      for await (const event of configMaps.watch({
        namespace: ns.name,
        labelSelector: label,
        timeoutSeconds: 2,
        allowWatchBookmarks,
        signal: AbortSignal.timeout(20_000),
      })) {
        const { annotations } = (event.object as KubeObject).metadata ?? {};
        events.push(
          event.type === 'BOOKMARK' ? `BOOKMARK ${Object.keys(annotations ?? {}).join()}` : named(event),
        );
      }
      return events;
    };
    const [withBookmarks, without] = await Promise.all([watchAll(true), watchAll(false)]);
    // Then perhaps the bookmark the server sends as the watch's deadline nears.
    assert.deepEqual(withBookmarks.slice(0, 2), ['ADDED bm', 'BOOKMARK k8s.io/initial-events-end']);
    assert.ok(
      withBookmarks.slice(2).every((event) => event === 'BOOKMARK '),
      withBookmarks.join(),
    );
    assert.deepEqual(without, ['ADDED bm']);
  });

  it('fails to start with the API error of the request', async () => {
    const error = await failure(
      (async () => {
        for await (const event of configMaps.watch({
          namespace: ns.name,
          labelSelector: '!!!',
          signal: AbortSignal.timeout(10_000),
        })) {
          return event;
        }
      })(),
    );
    assert.equal(error.status, 400);
  });
});

describe('create and update', () => {
  it('create answers the object as stored; dryRun stores nothing', async () => {
    const created = await configMap('created', { a: '1' });
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);
    const dry = await configMaps.create({ metadata: { namespace: ns.name, name: 'dry' } }, { dryRun: true });
    assert.equal(dry.metadata?.name, 'dry');
    assert.equal(await configMaps.getOptional({ namespace: ns.name, name: 'dry' }), undefined);
    assert.equal(isAlreadyExists(await failure(configMap('created'))), true);
  });

  it("create with answer 'none' resolves with nothing, the object stored; its errors are the same", async () => {
    const body = { metadata: { namespace: ns.name, name: 'no-answer' }, data: { big: 'x'.repeat(4096) } };
    const answer = await configMaps.create(body, { answer: 'none' }).then((value: unknown) => value);
    assert.equal(answer, undefined);
    assert.equal((await configMaps.get({ namespace: ns.name, name: 'no-answer' })).data?.big?.length, 4096);
    const again = await failure(configMaps.create(body, { answer: 'none' }));
    assert.equal(isAlreadyExists(again), true);
    assert.match(again.message, /no-answer.*already exists/);
  });

  it('update replaces the object, only at its resourceVersion and uid when they are set', async () => {
    const created = await configMap('updated', { a: '1' });
    const updated = await configMaps.update({ ...created, data: { a: '2' } });
    assert.deepEqual(updated.data, { a: '2' });
    assert.notEqual(updated.metadata?.resourceVersion, created.metadata?.resourceVersion);

    const stale = await failure(configMaps.update({ ...created, data: { a: 'stale' } }));
    assert.equal(isConflict(stale), true);

    const withoutVersion = { ...created.metadata };
    delete withoutVersion.resourceVersion;
    const otherUid = { ...withoutVersion, uid: '00000000-0000-0000-0000-000000000000' };
    const wrongUid = await failure(configMaps.update({ metadata: otherUid, data: { a: 'other' } }));
    assert.equal(isConflict(wrongUid), true);

    // Neither an unconditional update loses a write: without them it is last-writer-wins.
    const last = await configMaps.update({ metadata: withoutVersion, data: { a: '3' } });
    assert.deepEqual(last.data, { a: '3' });
    const dry = await configMaps.update({ ...last, data: { a: 'dry' } }, { dryRun: true });
    assert.deepEqual(dry.data, { a: 'dry' });
    assert.deepEqual((await configMaps.get({ namespace: ns.name, name: 'updated' })).data, { a: '3' });
  });
});

describe('delete', () => {
  it('resolves true when it deleted, false when the object was gone', async () => {
    await configMap('deleted');
    assert.equal(await configMaps.delete({ namespace: ns.name, name: 'deleted' }), true);
    assert.equal(await configMaps.getOptional({ namespace: ns.name, name: 'deleted' }), undefined);
    assert.equal(await configMaps.delete({ namespace: ns.name, name: 'deleted' }), false);
  });

  it('deletes only the object its preconditions name; dryRun deletes nothing', async () => {
    const created = await configMap('guarded');
    const key = { namespace: ns.name, name: 'guarded' };
    const otherUid = await failure(
      configMaps.delete(key, { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }),
    );
    assert.equal(isConflict(otherUid), true);
    const stale = await configMaps.update({ ...created, data: { a: 'newer' } });
    const staleVersion = await failure(
      configMaps.delete(key, { preconditions: { resourceVersion: created.metadata?.resourceVersion ?? '' } }),
    );
    assert.equal(isConflict(staleVersion), true);
    assert.equal(await configMaps.delete(key, { dryRun: true }), true);
    assert.ok(await configMaps.getOptional(key), 'a dry run leaves the object');
    assert.equal(
      await configMaps.delete(key, {
        preconditions: {
          uid: created.metadata?.uid ?? '',
          resourceVersion: stale.metadata?.resourceVersion ?? '',
        },
        propagationPolicy: 'Background',
        gracePeriodSeconds: 0,
      }),
      true,
    );
    assert.equal(await configMaps.getOptional(key), undefined);
  });
});

describe('patch', () => {
  it('merge: sets and removes fields; with a resourceVersion only at it', async () => {
    const created = await configMap('merged', { a: '1', b: '2' });
    const key = { namespace: ns.name, name: 'merged' };
    const patched = await configMaps.patch(key, { merge: { data: { a: null, c: '3' } } });
    assert.deepEqual(patched.data, { b: '2', c: '3' });
    const stale = await failure(
      configMaps.patch(
        key,
        { merge: { data: { d: '4' } } },
        { resourceVersion: created.metadata?.resourceVersion ?? '' },
      ),
    );
    assert.equal(isConflict(stale), true);
    const current = await configMaps.patch(
      key,
      { merge: { data: { d: '4' } } },
      { resourceVersion: patched.metadata?.resourceVersion ?? '' },
    );
    assert.deepEqual(current.data, { b: '2', c: '3', d: '4' });
    const dry = await configMaps.patch(key, { merge: { data: { e: '5' } } }, { dryRun: true });
    assert.equal(dry.data?.e, '5');
    assert.equal((await configMaps.get(key)).data?.e, undefined, 'a dry run leaves the object');
    assert.equal(
      isNotFound(await failure(configMaps.patch({ ...key, name: 'absent' }, { merge: {} }))),
      true,
    );
  });

  it('json: applies the operations in order; with a resourceVersion only at it', async () => {
    const created = await configMap('json-patched', { a: '1' });
    const key = { namespace: ns.name, name: 'json-patched' };
    const patched = await configMaps.patch(key, {
      json: [
        { op: 'add', path: '/data/b', value: '2' },
        { op: 'copy', from: '/data/b', path: '/data/c' },
        { op: 'remove', path: '/data/a' },
      ],
    });
    assert.deepEqual(patched.data, { b: '2', c: '2' });
    const stale = await failure(
      configMaps.patch(
        key,
        { json: [{ op: 'replace', path: '/data/b', value: 'stale' }] },
        { resourceVersion: created.metadata?.resourceVersion ?? '' },
      ),
    );
    assert.equal(isConflict(stale), true, `${stale.status} ${stale.reason}`);
    const current = await configMaps.patch(
      key,
      { json: [{ op: 'replace', path: '/data/b', value: 'new' }] },
      { resourceVersion: patched.metadata?.resourceVersion ?? '' },
    );
    assert.equal(current.data?.b, 'new');
    const failedTest = await failure(
      configMaps.patch(key, { json: [{ op: 'test', path: '/data/b', value: 'old' }] }),
    );
    assert.equal(isInvalid(failedTest), true, 'a failed test operation is Invalid, not a Conflict');
  });

  it('status: the subresource writes status only, the main resource everything else', async () => {
    const created = await widgets.create(
      { metadata: { namespace: ns.name, name: 'status' }, spec: { size: 1 } },
      { fieldManager: 'test' },
    );
    const key = { namespace: ns.name, name: 'status' };
    const patched = await widgets.status.patch(
      key,
      { merge: { status: { phase: 'Ready' }, spec: { size: 99 } } },
      { resourceVersion: created.metadata?.resourceVersion ?? '' },
    );
    assert.equal(patched.status?.phase, 'Ready');
    assert.equal(patched.spec?.size, 1, 'the status subresource ignores spec');
    const stale = await failure(
      widgets.status.patch(
        key,
        { merge: { status: { phase: 'Stale' } } },
        { resourceVersion: created.metadata?.resourceVersion ?? '' },
      ),
    );
    assert.equal(isConflict(stale), true);
    await widgets.patch(key, { merge: { spec: { size: 2 }, status: { phase: 'Ignored' } } });
    const current = await widgets.status.get(key);
    assert.deepEqual([current.spec?.size, current.status?.phase], [2, 'Ready']);
    const updated = await widgets.status.update({ ...current, status: { phase: 'Updated' } });
    assert.equal(updated.status?.phase, 'Updated');
    assert.equal(
      isNotFound(await failure(widgets.status.patch({ ...key, name: 'absent' }, { merge: {} }))),
      true,
    );
  });
});

describe('server-side apply', () => {
  const key = (name: string) => ({ namespace: ns.name, name });

  it('needs a fieldManager: without one it is a TypeError, sent nothing', async () => {
    const before = client.stats().requests;
    await assert.rejects(configMaps.apply({ metadata: key('unmanaged') }), {
      name: 'TypeError',
      message: 'configmaps: server-side apply needs a fieldManager',
    });
    await assert.rejects(configMaps.patch(key('x'), { merge: {} }, { force: true }), {
      name: 'TypeError',
      message: 'configmaps: force applies to server-side apply only',
    });
    assert.equal(client.stats().requests, before);
  });

  it("creates the object; another manager's different value is a Conflict, unless forced", async () => {
    const applied = await configMaps.apply(
      { metadata: key('applied'), data: { a: '1', b: '1' } },
      { fieldManager: 'first' },
    );
    assert.deepEqual(applied.data, { a: '1', b: '1' });
    assert.deepEqual(fieldsOf(applied, 'first'), { 'f:data': { 'f:a': {}, 'f:b': {} } });

    const conflict = await failure(
      configMaps.apply({ metadata: key('applied'), data: { a: '2' } }, { fieldManager: 'second' }),
    );
    assert.equal(isConflict(conflict), true);
    assert.match(conflict.message, /conflict with "first"/);
    // The same value is no conflict: both managers own it.
    const shared = await configMaps.apply(
      { metadata: key('applied'), data: { b: '1' } },
      { fieldManager: 'second' },
    );
    assert.deepEqual(fieldsOf(shared, 'second'), { 'f:data': { 'f:b': {} } });

    const forced = await configMaps.apply(
      { metadata: key('applied'), data: { a: '2', b: '1' } },
      { fieldManager: 'second', force: true },
    );
    assert.deepEqual(forced.data, { a: '2', b: '1' });
    assert.deepEqual(fieldsOf(forced, 'first'), { 'f:data': { 'f:b': {} } }, 'first lost f:a');
    assert.deepEqual(fieldsOf(forced, 'second'), { 'f:data': { 'f:a': {}, 'f:b': {} } });
  });

  it("with the client's fieldManager; a field left out of the next apply is removed; dryRun leaves it", async () => {
    const managed = new KubeClient(kc, { rateLimit: false, fieldManager: 'the-controller' });
    try {
      const handle = managed.resource<ConfigMap>(CONFIG_MAPS);
      const first = await handle.apply({ metadata: key('owned'), data: { a: '1', b: '2' } });
      assert.ok('f:data' in fieldsOf(first, 'the-controller'));
      const dry = await handle.apply({ metadata: key('owned'), data: { a: '1' } }, { dryRun: true });
      assert.deepEqual(dry.data, { a: '1' });
      assert.deepEqual((await handle.get(key('owned'))).data, { a: '1', b: '2' });
      const second = await handle.apply({ metadata: key('owned'), data: { a: '1' } });
      assert.deepEqual(second.data, { a: '1' });
      assert.equal(await handle.getOptional(key('dry-applied')), undefined);
      await handle.apply({ metadata: key('dry-applied') }, { dryRun: true });
      assert.equal(
        await handle.getOptional(key('dry-applied')),
        undefined,
        'a dry-run apply creates nothing',
      );
    } finally {
      await managed.close();
    }
  });

  it('on status: the subresource records its own manager entry', async () => {
    await widgets.create({ metadata: key('applied-status'), spec: { size: 1 } });
    const applied = await widgets.status.apply(
      { metadata: key('applied-status'), status: { phase: 'Applied' } },
      { fieldManager: 'status-writer' },
    );
    assert.equal(applied.status?.phase, 'Applied');
    assert.equal(applied.spec?.size, 1);
    assert.deepEqual(fieldsOf(applied, 'status-writer', 'status'), { 'f:status': { 'f:phase': {} } });
  });
});

describe('cluster-scoped resources', () => {
  it('are named without a namespace through every call', async () => {
    const name = uniqueName('cw');
    const created = await clusterWidgets.create({ metadata: { name }, spec: { size: 1 } });
    assert.equal(created.metadata?.namespace, undefined);
    assert.equal((await clusterWidgets.get({ name })).spec?.size, 1);
    const page = await clusterWidgets.list();
    assert.deepEqual(
      page.items.map((item) => [item.metadata?.name, item.kind]),
      [[name, clusterWidgets.type.kind]],
    );
    await assert.rejects(clusterWidgets.list({ namespace: ns.name }), { name: 'TypeError' });
    const patched = await clusterWidgets.status.patch({ name }, { merge: { status: { phase: 'Ready' } } });
    assert.equal(patched.status?.phase, 'Ready');
    const applied = await clusterWidgets.apply(
      { metadata: { name }, spec: { color: 'red' } },
      { fieldManager: 'x' },
    );
    assert.deepEqual(applied.spec, { size: 1, color: 'red' });
    assert.equal(await clusterWidgets.delete({ name }), true);
    assert.equal(await clusterWidgets.delete({ name }), false);
  });

  it('namespaces: a built-in one', async () => {
    const namespaces = client.resource(NAMESPACES);
    const own = await namespaces.get({ name: ns.name });
    assert.equal(own.metadata?.labels?.['loopwright.dev/test'], 'true');
    const page = await namespaces.list({ labelSelector: 'kubernetes.io/metadata.name=default' });
    assert.deepEqual(
      page.items.map((item) => [item.apiVersion, item.kind, item.metadata?.name]),
      [['v1', 'Namespace', 'default']],
    );
  });
});

describe('protobuf', () => {
  const pods = client.resource<TestPod>(PODS, { protobuf: TEST_POD_CODEC });
  const label = 'loopwright.dev/protobuf-test';

  it("creates a pod with answer 'none', and fails with the same errors as JSON", async () => {
    const pod = testPod(ns.name, 'proto', { [label]: 'yes' });
    const answer = await pods
      .create(pod, { encoding: 'protobuf', answer: 'none' })
      .then((value: unknown) => value);
    assert.equal(answer, undefined);
    const stored = await pods.get({ namespace: ns.name, name: 'proto' });
    assert.deepEqual(
      stored.spec?.containers.map(({ name, image }) => ({ name, image })),
      pod.spec?.containers,
    );
    assert.deepEqual(stored.metadata?.labels, { [label]: 'yes' });
    const created = await pods.create(testPod(ns.name, 'proto-answered'), { encoding: 'protobuf' });
    assert.equal(created.metadata?.name, 'proto-answered', 'without answer none, the object as JSON');

    const [protoExists, jsonExists] = await Promise.all([
      failure(pods.create(pod, { encoding: 'protobuf', answer: 'none' })),
      failure(pods.create(pod)),
    ]);
    assert.equal(isAlreadyExists(protoExists), true);
    assert.equal(protoExists.message, jsonExists.message);
    const invalid = testPod(ns.name, 'Not_Valid');
    const [protoInvalid, jsonInvalid] = await Promise.all([
      failure(pods.create(invalid, { encoding: 'protobuf', answer: 'none' })),
      failure(pods.create(invalid)),
    ]);
    assert.equal(isInvalid(protoInvalid), true);
    assert.deepEqual(protoInvalid.details, jsonInvalid.details);
  });

  it('writes a ConfigMap by a schema as JSON would, and update too', async () => {
    const schema: MessageSchema = {
      metadata: [
        1,
        {
          message: {
            name: [1, 'string'],
            namespace: [3, 'string'],
            resourceVersion: [6, 'string'],
            labels: [11, { map: 'string' }],
          },
        },
      ],
      data: [2, { map: 'string' }],
    };
    const protoMaps = configMaps.withProtobuf({
      encode: (object) =>
        encodeObject('v1', 'ConfigMap', schema, object as Readonly<Record<string, unknown>>),
    });
    const body = (name: string): ConfigMap => ({
      metadata: { namespace: ns.name, name, labels: { app: 'x' } },
      data: { text: 'ünïcode ✓', empty: '' },
    });
    const proto = await protoMaps.create(body('proto-map'), { encoding: 'protobuf' });
    const json = await configMaps.create(body('json-map'));
    assert.deepEqual([proto.metadata?.labels, proto.data], [json.metadata?.labels, json.data]);
    const updated = await protoMaps.update(
      {
        metadata: { ...body('proto-map').metadata, resourceVersion: proto.metadata?.resourceVersion ?? '' },
        data: { a: 'b' },
      },
      { encoding: 'protobuf' },
    );
    assert.deepEqual(updated.data, { a: 'b' });
    const stale = await failure(
      protoMaps.update(
        {
          ...body('proto-map'),
          metadata: { ...body('proto-map').metadata, resourceVersion: proto.metadata?.resourceVersion ?? '' },
        },
        { encoding: 'protobuf', answer: 'none' },
      ),
    );
    assert.equal(isConflict(stale), true);
  });

  it('lists and watches pods in protobuf, with the metadata JSON gives', async () => {
    const start = await pods.list({ namespace: ns.name, labelSelector: label, encoding: 'protobuf' });
    const json = await pods.list({ namespace: ns.name, labelSelector: label });
    assert.equal(start.resourceVersion !== '', true);
    assert.deepEqual(
      start.items.map((item) => [item.apiVersion, item.kind, item.metadata]),
      json.items.map((item) => [item.apiVersion, item.kind, item.metadata]),
    );
    assert.deepEqual(
      start.items.map((item) => item.metadata?.name),
      ['proto'],
    );
    const paged = await pods.list({ namespace: ns.name, limit: 1, encoding: 'protobuf' });
    assert.equal(paged.items.length, 1);
    assert.notEqual(paged.continue, '');

    const abort = new AbortController();
    const events = watchUntil(
      pods.watch({
        namespace: ns.name,
        labelSelector: label,
        resourceVersion: start.resourceVersion,
        encoding: 'protobuf',
        signal: abort.signal,
      }),
      abort,
      (seen) => seen.some((event) => event.type === 'DELETED'),
    );
    await pods.create(testPod(ns.name, 'watched', { [label]: 'yes' }), {
      encoding: 'protobuf',
      answer: 'none',
    });
    await pods.patch(
      { namespace: ns.name, name: 'watched' },
      { merge: { metadata: { annotations: { step: '2' } } } },
    );
    await pods.delete({ namespace: ns.name, name: 'watched' }, { gracePeriodSeconds: 0 });
    const seen = (await events).filter((event) => event.type !== 'BOOKMARK');
    // Deleted with a grace period of 0: marked first (deletionTimestamp), then gone.
    assert.deepEqual(seen.map(named), [
      'ADDED watched',
      'MODIFIED watched',
      'MODIFIED watched',
      'DELETED watched',
    ]);
    assert.ok(seen.every((event) => event.object.apiVersion === 'v1' && event.object.kind === 'Pod'));
    assert.equal((seen[1]?.object as TestPod | undefined)?.metadata?.annotations?.step, '2');
  });

  it('needs the codec half the call uses', async () => {
    const plain = client.resource<TestPod>(PODS);
    await assert.rejects(plain.create(testPod(ns.name, 'x'), { encoding: 'protobuf' }), {
      name: 'TypeError',
      message: 'pods: no protobuf encoder (withProtobuf)',
    });
    await assert.rejects(plain.list({ namespace: ns.name, encoding: 'protobuf' }), {
      name: 'TypeError',
      message: 'pods: no protobuf decoder (withProtobuf)',
    });
    const decodeOnly = plain.withProtobuf({ decode: TEST_POD_CODEC.decode });
    await assert.rejects(decodeOnly.update(testPod(ns.name, 'x'), { encoding: 'protobuf' }), {
      name: 'TypeError',
    });
  });
});
