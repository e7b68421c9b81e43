import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideLifecycle, type LifecycleAction, type ServerState } from './lifecycle-decision.ts';
import type { Node } from './node.ts';

function node(
  ready: 'True' | 'False' | 'Unknown' | undefined,
  opts: { providerID?: string; taints?: string[] } = {},
): Node {
  return {
    metadata: { name: 'n' },
    spec: {
      providerID: 'providerID' in opts ? opts.providerID : 'hcloud://1',
      taints: (opts.taints ?? []).map((key) => ({ key, effect: 'NoSchedule' })),
    },
    status: { conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }] },
  };
}
const SHUTDOWN = 'node.cloudprovider.kubernetes.io/shutdown';
const running: ServerState = { state: 'exists', status: 'running' };
const off: ServerState = { state: 'exists', status: 'off' };
const gone: ServerState = { state: 'gone' };
const error: ServerState = { state: 'unknown', reason: '503 unavailable' };

describe('decideLifecycle: the decision table', () => {
  it('Ready x every server state: never deletes, only removes the shutdown taint', () => {
    for (const server of [running, off, gone, error, undefined]) {
      assert.equal(decideLifecycle(node('True'), server).kind, 'none');
      assert.equal(
        decideLifecycle(node('True', { taints: [SHUTDOWN] }), server).kind,
        'remove-shutdown-taint',
      );
    }
  });

  for (const ready of ['False', 'Unknown', undefined] as const) {
    it(`Ready=${ready ?? 'missing'}: exists -> none, off -> taint, gone -> delete, error -> retry`, () => {
      assert.equal(decideLifecycle(node(ready), running).kind, 'none');
      assert.equal(decideLifecycle(node(ready), off).kind, 'add-shutdown-taint');
      assert.equal(decideLifecycle(node(ready, { taints: [SHUTDOWN] }), off).kind, 'none');
      assert.equal(decideLifecycle(node(ready), gone).kind, 'delete-node');
      assert.equal(decideLifecycle(node(ready), error).kind, 'retry');
      assert.equal(decideLifecycle(node(ready), undefined).kind, 'retry');
    });
  }

  it('other statuses (starting, stopping, migrating...) are left alone', () => {
    for (const status of ['starting', 'stopping', 'migrating', 'rebuilding', 'deleting', 'unknown'] as const)
      assert.equal(decideLifecycle(node('False'), { state: 'exists', status }).kind, 'none', status);
  });

  it('foreign, Robot, malformed or unset providerIDs and uninitialised Nodes are never acted on', () => {
    for (const providerID of ['aws:///x/i-1', 'hrobot://5', 'hcloud://bm-5', 'hcloud://x', undefined, '']) {
      const states: ServerState[] = [gone, off];
      for (const state of states) {
        const action: LifecycleAction = decideLifecycle(
          node('False', { providerID, taints: [SHUTDOWN] }),
          state,
        );
        assert.equal(action.kind, 'none', String(providerID));
        assert.equal(decideLifecycle(node('True', { providerID, taints: [SHUTDOWN] }), state).kind, 'none');
      }
    }
    assert.equal(
      decideLifecycle(node('False', { taints: ['node.cloudprovider.kubernetes.io/uninitialized'] }), gone)
        .kind,
      'none',
    );
  });
});
