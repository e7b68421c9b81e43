/** undiscovered: which served versions of a CRD the aggregated discovery document does not list yet. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { undiscovered, type Crd, type GroupDiscoveryList } from './crds.ts';

const crd: Crd = {
  metadata: { name: 'gadgets.example.dev' },
  spec: {
    group: 'example.dev',
    names: { plural: 'gadgets' },
    versions: [
      { name: 'v1', served: true },
      { name: 'v1beta1', served: true },
      { name: 'v1alpha1', served: false },
    ],
  },
};

const group = (
  name: string,
  versions: Record<string, string[]>,
): NonNullable<GroupDiscoveryList['items']>[number] => ({
  metadata: { name },
  versions: Object.entries(versions).map(([version, resources]) => ({
    version,
    resources: resources.map((resource) => ({ resource })),
  })),
});

describe('undiscovered', () => {
  it('nothing once every served version lists the plural', () => {
    const discovery = { items: [group('example.dev', { v1: ['gizmos', 'gadgets'], v1beta1: ['gadgets'] })] };
    assert.deepEqual(undiscovered(crd, discovery), []);
  });

  it('each served version that lacks the plural, as group/version/plural; unserved versions are not awaited', () => {
    const discovery = { items: [group('example.dev', { v1: ['gadgets'], v1beta1: ['gizmos'] })] };
    assert.deepEqual(undiscovered(crd, discovery), ['example.dev/v1beta1/gadgets']);
  });

  it('every served version when the group is missing, or listed under another name', () => {
    for (const discovery of [
      {},
      { items: [] },
      { items: [group('other.dev', { v1: ['gadgets'], v1beta1: ['gadgets'] })] },
    ])
      assert.deepEqual(undiscovered(crd, discovery), [
        'example.dev/v1/gadgets',
        'example.dev/v1beta1/gadgets',
      ]);
  });

  it('a version listed without resources is not discovered', () => {
    const discovery = {
      items: [{ metadata: { name: 'example.dev' }, versions: [{ version: 'v1' }, { version: 'v1beta1' }] }],
    };
    assert.deepEqual(undiscovered(crd, discovery), ['example.dev/v1/gadgets', 'example.dev/v1beta1/gadgets']);
  });
});
