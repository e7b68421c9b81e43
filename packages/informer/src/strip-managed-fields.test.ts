import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stripManagedFields } from './strip-managed-fields.ts';
import { hasFastProperties } from './v8-internals.test-support.ts';
import type { KubeObject } from '@loopwright/client';

/** As the API server sends it: decoded JSON, managedFields last in metadata. */
const decoded = (): KubeObject & { data?: Record<string, string> } =>
  JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'apps',
        uid: '2ccda16a-6ce0-4224-8f3e-98d9b96b95ae',
        resourceVersion: '214',
        generation: 1,
        creationTimestamp: '2026-11-24T16:23:54Z',
        labels: { app: 'web' },
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u', controller: true }],
        finalizers: ['example.com/cleanup'],
        managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:data': {} } }],
      },
      data: { key: 'value' },
    }),
  ) as KubeObject & { data?: Record<string, string> };

describe('stripManagedFields', () => {
  it('drops metadata.managedFields and keeps every other field', () => {
    const expected = decoded();
    delete expected.metadata?.managedFields;
    const stripped = stripManagedFields(decoded());
    assert.deepEqual(stripped, expected);
    assert.ok(!('managedFields' in (stripped.metadata ?? {})));
  });

  it('leaves metadata a fast-properties object, not a hash table', () => {
    const obj = decoded();
    assert.ok(hasFastProperties(obj.metadata ?? {}));
    assert.ok(hasFastProperties(stripManagedFields(obj).metadata ?? {}));
  });

  it('leaves an object without managedFields as it is', () => {
    const obj = decoded();
    delete obj.metadata?.managedFields;
    const metadata = obj.metadata;
    assert.equal(stripManagedFields(obj).metadata, metadata);
    const bare = { kind: 'Status' };
    assert.deepEqual(stripManagedFields(bare), { kind: 'Status' });
  });
});
