import type { KubeObject } from '@loopwright/informer';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  and,
  annotationsChanged,
  generationChanged,
  ignoreStatusOnlyUpdates,
  labelsChanged,
  not,
  or,
  type Predicate,
} from './predicates.ts';

type Obj = KubeObject & { spec?: unknown; status?: unknown };

const base: Obj = {
  apiVersion: 'v1',
  kind: 'Thing',
  metadata: {
    name: 'a',
    namespace: 'ns',
    uid: 'u1',
    resourceVersion: '1',
    generation: 1,
    labels: { app: 'x' },
    annotations: { note: 'n' },
    managedFields: [{ manager: 'kubectl' }],
  },
  spec: { replicas: 1 },
  status: { ready: false },
};

/** `base` with `metadata` merged and the other top-level fields replaced. */
function changed(patch: Partial<Obj>, metadata: Partial<NonNullable<Obj['metadata']>> = {}): Obj {
  return { ...base, ...patch, metadata: { ...base.metadata, ...metadata } };
}

const gone = { finalStateUnknown: false };

/** Every kind of event, each with its object(s). */
function judge(predicate: Predicate<Obj>, obj: Obj = base) {
  return {
    create: predicate.create?.(obj) ?? true,
    delete: predicate.delete?.(obj, gone) ?? true,
    resync: predicate.resync?.(obj) ?? true,
  };
}

const everyNonUpdatePasses = { create: true, delete: true, resync: true };

describe('generationChanged', () => {
  const update = (oldObj: Obj, newObj: Obj) => generationChanged.update?.(oldObj, newObj);

  it('passes an update that changed the generation (a spec change)', () => {
    assert.equal(update(base, changed({ spec: { replicas: 2 } }, { generation: 2 })), true);
  });

  it('drops an update with the same generation (status, labels, annotations)', () => {
    assert.equal(
      update(base, changed({ status: { ready: true } }, { resourceVersion: '2', labels: { app: 'y' } })),
      false,
    );
  });

  it('passes updates of objects without a generation, as kube-rs (it cannot judge them)', () => {
    const noGeneration = changed({}, { generation: undefined });
    assert.equal(update(noGeneration, changed({ status: { ready: true } }, { generation: undefined })), true);
    assert.equal(update(base, noGeneration), true, 'new object without generation');
    assert.equal(update(noGeneration, base), true, 'old object without generation');
  });

  it('passes create, delete and resync', () => {
    assert.deepEqual(judge(generationChanged), everyNonUpdatePasses);
  });
});

describe('labelsChanged', () => {
  const update = (oldObj: Obj, newObj: Obj) => labelsChanged.update?.(oldObj, newObj);

  it('passes an update that added, changed or removed a label', () => {
    assert.equal(update(base, changed({}, { labels: { app: 'x', tier: 'web' } })), true);
    assert.equal(update(base, changed({}, { labels: { app: 'y' } })), true);
    assert.equal(update(base, changed({}, { labels: {} })), true);
    assert.equal(update(base, changed({}, { labels: undefined })), true);
  });

  it('drops an update with the same labels, whatever else changed', () => {
    assert.equal(
      update(
        base,
        changed({ spec: {}, status: {} }, { labels: { app: 'x' }, annotations: {}, generation: 9 }),
      ),
      false,
    );
  });

  it('treats no labels and empty labels as the same', () => {
    assert.equal(update(changed({}, { labels: undefined }), changed({}, { labels: {} })), false);
  });

  it('passes create, delete and resync', () => {
    assert.deepEqual(judge(labelsChanged), everyNonUpdatePasses);
  });
});

describe('annotationsChanged', () => {
  const update = (oldObj: Obj, newObj: Obj) => annotationsChanged.update?.(oldObj, newObj);

  it('passes an update that added, changed or removed an annotation', () => {
    assert.equal(update(base, changed({}, { annotations: { note: 'n', other: 'o' } })), true);
    assert.equal(update(base, changed({}, { annotations: { note: 'm' } })), true);
    assert.equal(update(base, changed({}, { annotations: undefined })), true);
  });

  it('drops an update with the same annotations, whatever else changed', () => {
    assert.equal(update(base, changed({ spec: {} }, { labels: {}, generation: 2 })), false);
  });

  it('treats no annotations and empty annotations as the same', () => {
    assert.equal(update(changed({}, { annotations: {} }), changed({}, { annotations: undefined })), false);
  });

  it('passes create, delete and resync', () => {
    assert.deepEqual(judge(annotationsChanged), everyNonUpdatePasses);
  });
});

describe('ignoreStatusOnlyUpdates', () => {
  const update = (oldObj: Obj, newObj: Obj) => ignoreStatusOnlyUpdates.update?.(oldObj, newObj);
  const statusWrite = changed(
    { status: { ready: true, conditions: [{ type: 'Ready' }] } },
    { resourceVersion: '2', managedFields: [{ manager: 'kubectl' }, { manager: 'kubelet' }] },
  );

  it('drops an update that changed only status, resourceVersion and managedFields', () => {
    assert.equal(update(base, statusWrite), false);
  });

  it('drops a status-only update of an object without a generation (a Node heartbeat)', () => {
    const node = changed({ spec: { podCIDR: '10.0.0.0/24' } }, { generation: undefined });
    const heartbeat = {
      ...node,
      status: { heartbeat: 2 },
      metadata: { ...node.metadata, resourceVersion: '9' },
    };
    assert.equal(update(node, heartbeat), false);
  });

  it('drops an update that removed the status or added it', () => {
    assert.equal(update(base, changed({ status: undefined })), false);
    const noStatus = structuredClone(base);
    delete noStatus.status;
    assert.equal(update(noStatus, base), false);
    assert.equal(update(base, noStatus), false);
  });

  it('passes a spec change, even with a status change', () => {
    assert.equal(update(base, { ...statusWrite, spec: { replicas: 2 } }), true);
  });

  it('passes a change of any other top-level field (a ConfigMap data change)', () => {
    assert.equal(update({ ...base, data: { a: '1' } } as Obj, { ...base, data: { a: '2' } } as Obj), true);
  });

  it('passes metadata changes: generation, labels, annotations, finalizers, owners, deletion', () => {
    const cases: Partial<NonNullable<Obj['metadata']>>[] = [
      { generation: 2 },
      { labels: { app: 'y' } },
      { annotations: { note: 'm' } },
      { finalizers: ['example.com/cleanup'] },
      { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'o1' }] },
      { deletionTimestamp: '2025-01-01T00:00:00Z' },
    ];
    for (const metadata of cases)
      assert.equal(
        update(base, changed({}, { resourceVersion: '2', ...metadata })),
        true,
        JSON.stringify(metadata),
      );
  });

  it('passes create, delete and resync', () => {
    assert.deepEqual(judge(ignoreStatusOnlyUpdates), everyNonUpdatePasses);
  });
});

/** A predicate answering `answer` to every event, counting the calls it got. */
function fixed(answer: boolean) {
  const calls: string[] = [];
  const predicate: Predicate<Obj> = {
    create: () => (calls.push('create'), answer),
    update: () => (calls.push('update'), answer),
    delete: () => (calls.push('delete'), answer),
    resync: () => (calls.push('resync'), answer),
  };
  return { predicate, calls };
}

/** All four event kinds through `predicate`. */
function all(predicate: Predicate<Obj>) {
  return { ...judge(predicate), update: predicate.update?.(base, base) ?? true };
}

const allPass = { create: true, update: true, delete: true, resync: true };
const allDropped = { create: false, update: false, delete: false, resync: false };

describe('and', () => {
  it('passes an event only when every predicate passes it', () => {
    assert.deepEqual(all(and(fixed(true).predicate, fixed(true).predicate)), allPass);
    assert.deepEqual(all(and(fixed(true).predicate, fixed(false).predicate)), allDropped);
    assert.deepEqual(all(and(fixed(false).predicate, fixed(true).predicate)), allDropped);
  });

  it('stops at the first predicate that drops the event', () => {
    const second = fixed(true);
    all(and(fixed(false).predicate, second.predicate));
    assert.deepEqual(second.calls, []);
  });

  it('counts an omitted function as passing', () => {
    assert.deepEqual(all(and({}, fixed(true).predicate)), allPass);
    assert.deepEqual(all(and({}, fixed(false).predicate)), allDropped);
  });

  it('of nothing passes everything', () => {
    assert.deepEqual(all(and()), allPass);
  });

  it('hands every function its event', () => {
    const seen: unknown[] = [];
    const recording: Predicate<Obj> = {
      create: (obj) => (seen.push(['create', obj]), true),
      update: (oldObj, newObj) => (seen.push(['update', oldObj, newObj]), true),
      delete: (obj, info) => (seen.push(['delete', obj, info]), true),
      resync: (obj) => (seen.push(['resync', obj]), true),
    };
    const newer = changed({}, { resourceVersion: '2' });
    for (const combined of [and(recording), or(recording), not(recording)]) {
      seen.length = 0;
      combined.create(base);
      combined.update(base, newer);
      combined.delete(base, { finalStateUnknown: true });
      combined.resync(newer);
      assert.deepEqual(seen, [
        ['create', base],
        ['update', base, newer],
        ['delete', base, { finalStateUnknown: true }],
        ['resync', newer],
      ]);
    }
  });
});

describe('or', () => {
  it('passes an event when any predicate passes it', () => {
    assert.deepEqual(all(or(fixed(false).predicate, fixed(true).predicate)), allPass);
    assert.deepEqual(all(or(fixed(true).predicate, fixed(false).predicate)), allPass);
    assert.deepEqual(all(or(fixed(false).predicate, fixed(false).predicate)), allDropped);
  });

  it('stops at the first predicate that passes the event', () => {
    const second = fixed(false);
    all(or(fixed(true).predicate, second.predicate));
    assert.deepEqual(second.calls, []);
  });

  it('counts an omitted function as passing', () => {
    assert.deepEqual(all(or({}, fixed(false).predicate)), allPass);
  });

  it('of nothing drops everything, as controller-runtime', () => {
    assert.deepEqual(all(or()), allDropped);
  });

  it('passes updates that changed labels or the generation, and no others', () => {
    const metadataOrSpec = or(generationChanged, labelsChanged);
    assert.equal(metadataOrSpec.update(base, changed({}, { generation: 2 })), true);
    assert.equal(metadataOrSpec.update(base, changed({}, { labels: {} })), true);
    assert.equal(metadataOrSpec.update(base, changed({ status: {} }, { annotations: {} })), false);
  });
});

describe('not', () => {
  it('passes exactly what the predicate drops', () => {
    assert.deepEqual(all(not(fixed(true).predicate)), allDropped);
    assert.deepEqual(all(not(fixed(false).predicate)), allPass);
  });

  it('drops the events an omitted function would pass', () => {
    assert.deepEqual(all(not({})), allDropped);
    assert.deepEqual(judge(not(generationChanged)), { create: false, delete: false, resync: false });
  });

  it('passes only status-only updates when negating ignoreStatusOnlyUpdates', () => {
    const statusOnly = not(ignoreStatusOnlyUpdates);
    assert.equal(statusOnly.update(base, changed({ status: { ready: true } })), true);
    assert.equal(statusOnly.update(base, changed({ spec: {} })), false);
  });
});
