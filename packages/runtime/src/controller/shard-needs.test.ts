import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedInformerFactory, type KubeObject, type ResourceClient } from '@loopwright/informer';
import { Controller, type ControllerOptions } from './controller.ts';

const AT = { group: 'loopwright.dev', version: 'v1', plural: 'ats', kind: 'At' };
const NODE = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false };
const PODS = { group: '', version: 'v1', plural: 'pods' };
const SECRETS = { group: '', version: 'v1', plural: 'secrets' };

/** Never started: the informers are only compared. */
const idle: ResourceClient<KubeObject> = {
  resource: 'idle',
  type: { group: '', version: 'v1', plural: 'idle' },
  list: () => new Promise(() => undefined),
  watch: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => undefined) }) }),
};

function needs(options: Partial<ControllerOptions<KubeObject>>) {
  const factory = new SharedInformerFactory({ createClient: () => idle });
  const controller = new Controller<KubeObject>({
    name: 'c',
    for: AT,
    owns: [PODS],
    watches: [{ resource: SECRETS, map: () => [] }],
    reconcile: () => Promise.resolve(),
    ...options,
  });
  const fieldOf = (scope: { group: string; version: string; plural: string }) =>
    controller
      .shardNeeds(factory)
      .filter(({ informer }) => informer === factory.forResource(scope))
      .map(({ field }) => field);
  return { primary: fieldOf(options.for ?? AT), owned: fieldOf(PODS), watched: fieldOf(SECRETS) };
}

describe('Controller.shardNeeds', () => {
  it('by uid: the primary on its uid; owned and watched objects whole', () => {
    assert.deepEqual(needs({ shardBy: 'uid' }), {
      primary: ['object.metadata.uid'],
      owned: [undefined],
      watched: [undefined],
    });
    assert.deepEqual(needs({}).primary, ['object.metadata.uid'], 'uid is the default');
  });

  it('by namespace: the primary and owned objects on their namespace; watched objects whole', () => {
    assert.deepEqual(needs({ shardBy: 'namespace' }), {
      primary: ['object.metadata.namespace'],
      owned: ['object.metadata.namespace'],
      watched: [undefined],
    });
  });

  it('by namespace with a cluster-scoped primary: what it owns in namespaces is cached whole', () => {
    assert.deepEqual(needs({ shardBy: 'namespace', for: NODE }), {
      primary: ['object.metadata.namespace'],
      owned: [undefined],
      watched: [undefined],
    });
  });
});
