/**
 * The event recorder against the real API server: Events are created with the right fields, and a
 * repeated event becomes a series, read back through the Events' handle.
 */
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeClient, type KubeObject } from '@loopwright/client';
import { EventRecorder } from './recorder.ts';
import type { EventsV1Event, ObjectReference } from './types.ts';

const kc = loadTestKubeConfig();
const client = new KubeClient(kc);
const configMaps = client.resource<KubeObject>({
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
});
/** The Events as the API server stores them, read independently of the recorder's sink. */
const events = client.resource<EventsV1Event>({
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
});
let namespace: TestNamespace;
let regarding: ObjectReference;

before(async () => {
  namespace = await createTestNamespace(kc, 'runtime-events');
  const configMap = await configMaps.create({ metadata: { namespace: namespace.name, name: 'subject' } });
  regarding = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: namespace.name,
    name: 'subject',
    uid: configMap.metadata?.uid ?? '',
    resourceVersion: configMap.metadata?.resourceVersion ?? '',
  };
});

after(async () => {
  await namespace.cleanup();
  await client.close();
});

describe('EventRecorder against the API server', () => {
  it('creates Events with the right fields and turns repeats into a series', async () => {
    const recorder = new EventRecorder({
      client,
      reportingController: 'loopwright.dev/runtime-test',
      reportingInstance: 'test-0',
    });
    recorder.event(regarding, {
      type: 'Warning',
      reason: 'SyncFailed',
      action: 'Sync',
      note: 'upstream said no',
    });
    recorder.event(regarding, { type: 'Normal', reason: 'Synced', action: 'Sync', note: 'x'.repeat(2000) });

    let name = '';
    await eventually(async () => {
      const list = await events.list({ namespace: namespace.name });
      const warning = list.items.find((e) => e.reason === 'SyncFailed');
      assert.ok(warning);
      name = warning.metadata.name;
      assert.match(name, /^subject\.[0-9a-f]+$/);
      assert.equal(warning.type, 'Warning');
      assert.equal(warning.action, 'Sync');
      assert.equal(warning.note, 'upstream said no');
      assert.equal(warning.reportingController, 'loopwright.dev/runtime-test');
      assert.equal(warning.reportingInstance, 'test-0');
      assert.equal(warning.regarding.uid, regarding.uid);
      assert.equal(warning.regarding.kind, 'ConfigMap');
      assert.equal(warning.series, undefined);
      const long = list.items.find((e) => e.reason === 'Synced');
      assert.equal(long?.note?.length, 1024, 'note truncated to the API limit instead of rejected');
    });

    recorder.event(regarding, {
      type: 'Warning',
      reason: 'SyncFailed',
      action: 'Sync',
      note: 'upstream said no',
    });
    recorder.event(regarding, {
      type: 'Warning',
      reason: 'SyncFailed',
      action: 'Sync',
      note: 'upstream said no',
    });
    await recorder.close(); // flushes the pending series count
    assert.deepEqual(recorder.stats(), { created: 2, patched: 1, aggregated: 2, dropped: 0, failed: 0 });

    const event = await events.get({ namespace: namespace.name, name });
    assert.equal(event.series?.count, 3);
    assert.match(event.series.lastObservedTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const all = await events.list({ namespace: namespace.name });
    assert.equal(
      all.items.filter((e) => e.reason === 'SyncFailed').length,
      1,
      'repeats did not create Events',
    );
  });

  it('an object with a 253-character name (the longest allowed) gets its Event', async () => {
    const longName = `${'a'.repeat(126)}.${'b'.repeat(126)}`;
    const configMap = await configMaps.create({ metadata: { namespace: namespace.name, name: longName } });
    const recorder = new EventRecorder({
      client,
      reportingController: 'loopwright.dev/runtime-test',
      reportingInstance: 'test-0',
    });
    recorder.event(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: namespace.name,
        name: longName,
        uid: configMap.metadata?.uid ?? '',
      },
      { type: 'Normal', reason: 'LongNameChecked', action: 'Check' },
    );
    await recorder.close();
    assert.deepEqual(recorder.stats(), { created: 1, patched: 0, aggregated: 0, dropped: 0, failed: 0 });
    const list = await events.list({
      namespace: namespace.name,
      fieldSelector: `regarding.name=${longName}`,
    });
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0]?.reason, 'LongNameChecked');
  });

  it('cluster-scoped objects get their Events in the default namespace', async () => {
    const recorder = new EventRecorder({
      client,
      reportingController: 'loopwright.dev/runtime-test',
      reportingInstance: namespace.name,
    });
    const nodeName = `${namespace.name}-node`;
    recorder.event(
      { apiVersion: 'v1', kind: 'Node', name: nodeName },
      { type: 'Normal', reason: 'Checked', action: 'Check' },
    );
    await recorder.close();
    assert.equal(recorder.stats().created, 1);
    const list = await events.list({ namespace: 'default', fieldSelector: `regarding.name=${nodeName}` });
    assert.equal(list.items.length, 1);
    await events.delete({ namespace: 'default', name: list.items[0]?.metadata.name ?? '' });
  });
});
