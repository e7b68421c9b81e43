import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { samplePlace, type CrdNames } from './generic-samples.ts';

const crd = (group: string, kind: string, plural: string, scope: 'Namespaced' | 'Cluster'): CrdNames => ({
  spec: { group, scope, names: { kind, plural } },
});
const crds = [
  crd('example.loopwright.dev', 'Widget', 'widgets', 'Namespaced'),
  crd('example.loopwright.dev', 'Gadget', 'gadgets', 'Cluster'),
];
const sample = (apiVersion: string, kind: string) => ({ apiVersion, kind, metadata: { name: 'one' } });

describe('samplePlace', () => {
  it("puts a namespaced kind's sample into the demo's namespace, under its CRD's plural", () => {
    assert.deepEqual(samplePlace(sample('example.loopwright.dev/v1alpha1', 'Widget'), crds), {
      type: {
        group: 'example.loopwright.dev',
        version: 'v1alpha1',
        plural: 'widgets',
        kind: 'Widget',
        namespaced: true,
      },
      key: { namespace: 'loopwright-demo', name: 'one' },
    });
  });

  it("puts a cluster-scoped kind's sample at the cluster's level", () => {
    assert.deepEqual(samplePlace(sample('example.loopwright.dev/v1', 'Gadget'), crds), {
      type: {
        group: 'example.loopwright.dev',
        version: 'v1',
        plural: 'gadgets',
        kind: 'Gadget',
        namespaced: false,
      },
      key: { name: 'one' },
    });
  });

  it("refuses a kind none of the controller's CRDs defines (by group and kind)", () => {
    assert.throws(
      () => samplePlace(sample('other.example.com/v1', 'Widget'), crds),
      /^Error: other\.example\.com\/v1 Widget is not a kind of the controller's CRDs$/,
    );
    assert.throws(() => samplePlace(sample('v1', 'ConfigMap'), crds), /v1 ConfigMap is not a kind/);
  });
});
