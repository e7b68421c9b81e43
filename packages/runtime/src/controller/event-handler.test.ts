import type { KubeObject } from '@loopwright/informer';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOW_PRIORITY, NORMAL_PRIORITY } from '@loopwright/workqueue';
import { enqueueFiltered } from './event-handler.ts';
import { generationChanged, type Predicate } from './predicates.ts';

function cm(name: string, uid: string, generation: number, owner = 'owner'): KubeObject {
  return { metadata: { name, namespace: 'ns', uid, generation, labels: { owner } } };
}

/** Maps an object to the key of the owner named in its `owner` label. */
const byOwnerLabel = (obj: KubeObject): string[] => [`ns/${obj.metadata?.labels?.owner ?? ''}`];

/** The handlers under test, the keys they enqueued and the predicate calls they made. */
function setUp(predicate?: Predicate) {
  const keys: string[] = [];
  const priorities: number[] = [];
  const calls: unknown[][] = [];
  const recording: Predicate | undefined = predicate && {
    create: (obj) => (calls.push(['create', obj.metadata?.uid]), predicate.create?.(obj) ?? true),
    update: (oldObj, newObj) => (
      calls.push(['update', oldObj.metadata?.uid, newObj.metadata?.uid]),
      predicate.update?.(oldObj, newObj) ?? true
    ),
    delete: (obj, info) => (
      calls.push(['delete', obj.metadata?.uid, info]),
      predicate.delete?.(obj, info) ?? true
    ),
    resync: (obj) => (calls.push(['resync', obj.metadata?.uid]), predicate.resync?.(obj) ?? true),
  };
  const handlers = enqueueFiltered(
    (key, priority) => {
      keys.push(key);
      priorities.push(priority);
    },
    byOwnerLabel,
    recording,
  );
  return {
    keys,
    priorities,
    calls,
    add: (obj: KubeObject, isInInitialList = false) => handlers.onAdd?.(obj, isInInitialList),
    update: (oldObj: KubeObject, newObj: KubeObject) => handlers.onUpdate?.(oldObj, newObj),
    delete: (obj: KubeObject, finalStateUnknown = false) => handlers.onDelete?.(obj, { finalStateUnknown }),
  };
}

const pass: Predicate = {};
const dropAll: Predicate = {
  create: () => false,
  update: () => false,
  delete: () => false,
  resync: () => false,
};

describe('enqueueFiltered', () => {
  it('without a predicate enqueues the mapped keys of every event', () => {
    const h = setUp();
    const old = cm('a', 'u1', 1, 'o1');
    h.add(old);
    h.update(old, cm('a', 'u1', 1, 'o2'));
    h.update(old, old);
    h.delete(old);
    assert.deepEqual(h.keys, ['ns/o1', 'ns/o1', 'ns/o2', 'ns/o1', 'ns/o1']);
  });

  it('enqueues what is not news at low priority: adds of the initial list and resyncs; every change at normal', () => {
    const h = setUp();
    const obj = cm('a', 'u1', 1, 'o1');
    h.add(obj, true);
    h.update(obj, obj);
    h.add(obj, false);
    h.update(obj, cm('a', 'u1', 2, 'o1'));
    h.update(obj, cm('a', 'u2', 1, 'o1'));
    h.delete(obj);
    h.delete(obj, true);
    assert.deepEqual(h.priorities, [
      LOW_PRIORITY,
      LOW_PRIORITY,
      NORMAL_PRIORITY,
      NORMAL_PRIORITY,
      NORMAL_PRIORITY,
      NORMAL_PRIORITY,
      NORMAL_PRIORITY,
    ]);
  });

  it('a create goes to predicate.create and enqueues only when it passes', () => {
    const passing = setUp(pass);
    passing.add(cm('a', 'u1', 1));
    assert.deepEqual(passing.calls, [['create', 'u1']]);
    assert.deepEqual(passing.keys, ['ns/owner']);
    const dropping = setUp(dropAll);
    dropping.add(cm('a', 'u1', 1));
    assert.deepEqual(dropping.keys, []);
  });

  it('an update goes to predicate.update and, when it passes, enqueues the keys of old and new', () => {
    const passing = setUp(pass);
    passing.update(cm('a', 'u1', 1, 'previous'), cm('a', 'u1', 2, 'current'));
    assert.deepEqual(passing.calls, [['update', 'u1', 'u1']]);
    assert.deepEqual(passing.keys, ['ns/previous', 'ns/current']);
    const dropping = setUp(dropAll);
    dropping.update(cm('a', 'u1', 1, 'previous'), cm('a', 'u1', 2, 'current'));
    assert.deepEqual(dropping.keys, []);
  });

  it('enqueues a key once when the old and the new object map to it, so an idle worker reconciles once', () => {
    const h = setUp(pass);
    h.update(cm('a', 'u1', 1), cm('a', 'u1', 2));
    assert.deepEqual(h.keys, ['ns/owner']);
    const multi = enqueueFiltered(
      (key) => h.keys.push(key),
      (obj) => [`ns/${obj.metadata?.name ?? ''}`, 'ns/shared'],
    );
    h.keys.length = 0;
    multi.onUpdate?.(cm('a', 'u1', 1), cm('b', 'u1', 2));
    assert.deepEqual(h.keys, ['ns/a', 'ns/shared', 'ns/b']);
  });

  it('a delete goes to predicate.delete with finalStateUnknown and enqueues only when it passes', () => {
    const passing = setUp(pass);
    passing.delete(cm('a', 'u1', 1), true);
    assert.deepEqual(passing.calls, [['delete', 'u1', { finalStateUnknown: true }]]);
    assert.deepEqual(passing.keys, ['ns/owner']);
    const dropping = setUp(dropAll);
    dropping.delete(cm('a', 'u1', 1));
    assert.deepEqual(dropping.keys, []);
  });

  it('a resync (the same object as old and new) goes to predicate.resync, not update', () => {
    const obj = cm('a', 'u1', 1);
    const passing = setUp(pass);
    passing.update(obj, obj);
    assert.deepEqual(passing.calls, [['resync', 'u1']]);
    assert.deepEqual(passing.keys, ['ns/owner'], 'enqueued once');
    const dropping = setUp(dropAll);
    dropping.update(obj, obj);
    assert.deepEqual(dropping.keys, []);
  });

  it('an equal copy is an update, not a resync: only the same instance is a resync', () => {
    const h = setUp(pass);
    const obj = cm('a', 'u1', 1);
    h.update(obj, structuredClone(obj));
    assert.deepEqual(h.calls, [['update', 'u1', 'u1']]);
  });

  it('keeps a resync through generationChanged, which would drop it as an update', () => {
    const h = setUp(generationChanged);
    const obj = cm('a', 'u1', 1);
    h.update(obj, obj);
    assert.deepEqual(h.keys, ['ns/owner']);
  });

  it('judges an update that changed the UID as the delete of the old object and the create of the new', () => {
    const h = setUp(pass);
    h.update(cm('a', 'old-uid', 1, 'o1'), cm('a', 'new-uid', 1, 'o2'));
    assert.deepEqual(h.calls, [
      ['delete', 'old-uid', { finalStateUnknown: true }],
      ['create', 'new-uid'],
    ]);
    assert.deepEqual(h.keys, ['ns/o1', 'ns/o2']);
  });

  it('lets a re-creation seen as one update through generationChanged (both generations are 1)', () => {
    const h = setUp(generationChanged);
    h.update(cm('a', 'old-uid', 1), cm('a', 'new-uid', 1));
    assert.deepEqual(h.keys, ['ns/owner'], 'once: both halves map to the same key');
    const sameUid = setUp(generationChanged);
    sameUid.update(cm('a', 'u1', 1), cm('a', 'u1', 1));
    assert.deepEqual(sameUid.keys, [], 'the same object with the same generation is dropped');
  });

  it('judges the two halves of a re-creation separately', () => {
    const onlyCreates = setUp({ delete: () => false });
    onlyCreates.update(cm('a', 'old-uid', 1, 'o1'), cm('a', 'new-uid', 1, 'o2'));
    assert.deepEqual(onlyCreates.keys, ['ns/o2']);
    const onlyDeletes = setUp({ create: () => false });
    onlyDeletes.update(cm('a', 'old-uid', 1, 'o1'), cm('a', 'new-uid', 1, 'o2'));
    assert.deepEqual(onlyDeletes.keys, ['ns/o1']);
  });

  it('treats an update where either object has no UID as an update', () => {
    const noUid = { metadata: { name: 'a', namespace: 'ns', labels: { owner: 'owner' } } };
    for (const [oldObj, newObj] of [
      [noUid, cm('a', 'u1', 1)],
      [cm('a', 'u1', 1), noUid],
    ] as const) {
      const h = setUp(pass);
      h.update(oldObj, newObj);
      assert.equal(h.calls[0]?.[0], 'update');
    }
  });
});
