import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@loopwright/informer';
import { enqueueControllerOwner, splitKey } from './mappers.ts';

const owned = (namespace: string | undefined, ...ownerReferences: object[]): KubeObject =>
  ({ metadata: { name: 'child', namespace, ownerReferences } }) as KubeObject;
const ref = (fields: object) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  name: 'w',
  uid: 'u',
  controller: true,
  ...fields,
});

describe('enqueueControllerOwner', () => {
  it("keys a namespaced owner in the owned object's namespace", () => {
    const keys = enqueueControllerOwner('Widget', 'example.com');
    assert.deepEqual(keys(owned('ns', ref({}))), ['ns/w']);
    assert.deepEqual(keys(owned(undefined, ref({}))), ['w'], 'a child without a namespace: the name alone');
  });

  it("keys a cluster-scoped owner by name alone, whatever the owned object's namespace", () => {
    const keys = enqueueControllerOwner('ClusterRole', 'rbac.authorization.k8s.io', false);
    const child = owned(
      'ns',
      ref({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'reader' }),
    );
    assert.deepEqual(keys(child), ['reader']);
    assert.deepEqual(splitKey('reader'), { namespace: undefined, name: 'reader' });
  });

  it('only a controller reference to the kind, in its group (any version)', () => {
    const keys = enqueueControllerOwner('Widget', 'example.com');
    assert.deepEqual(keys(owned('ns', ref({ controller: false }))), []);
    assert.deepEqual(keys(owned('ns', ref({ kind: 'Gadget' }))), []);
    assert.deepEqual(keys(owned('ns', ref({ apiVersion: 'other.com/v1' }))), []);
    assert.deepEqual(keys(owned('ns', ref({ apiVersion: 'example.com/v2beta1' }))), ['ns/w']);
    assert.deepEqual(keys(owned('ns')), []);
  });
});
