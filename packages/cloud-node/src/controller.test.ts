import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lifecycleDecisionChanged } from './controller.ts';
import { SHUTDOWN_TAINT } from './names.ts';
import type { Node } from './node.ts';

function node(
  ready: 'True' | 'False' | 'Unknown',
  options: {
    uid?: string;
    providerID?: string;
    taints?: string[];
    heartbeat?: string;
    address?: string;
  } = {},
): Node {
  return {
    metadata: { name: 'n', uid: options.uid ?? 'uid-1', labels: { pool: 'a' } },
    spec: {
      providerID: options.providerID ?? 'hcloud://1',
      taints: (options.taints ?? []).map((key) => ({ key, effect: 'NoSchedule' })),
    },
    status: {
      conditions: [
        { type: 'Ready', status: ready, lastHeartbeatTime: options.heartbeat ?? '2026-01-01T00:00:00Z' } as {
          type: string;
          status: string;
        },
      ],
      addresses: [{ type: 'ExternalIP', address: options.address ?? '192.0.2.1' }],
    },
  };
}

describe('lifecycleDecisionChanged', () => {
  const passes = (before: Node, after: Node): boolean =>
    lifecycleDecisionChanged.update?.(before, after) ?? true;

  it('drops what the decision does not read: heartbeats, addresses, Ready False <-> Unknown', () => {
    assert.equal(passes(node('True'), node('True', { heartbeat: '2026-01-01T00:05:00Z' })), false);
    assert.equal(passes(node('False'), node('False', { address: '192.0.2.2' })), false);
    assert.equal(passes(node('False'), node('Unknown')), false);
  });

  it('passes a change of Ready, of the taints it reads, of the providerID, and a new uid', () => {
    assert.equal(passes(node('True'), node('False')), true);
    assert.equal(passes(node('False'), node('True')), true);
    assert.equal(passes(node('True'), node('True', { taints: [SHUTDOWN_TAINT] })), true);
    assert.equal(passes(node('True', { taints: [SHUTDOWN_TAINT] }), node('True')), true);
    assert.equal(
      passes(node('False', { providerID: 'hcloud://1' }), node('False', { providerID: 'hcloud://2' })),
      true,
    );
    assert.equal(passes(node('False'), node('False', { uid: 'uid-2' })), true);
  });
});
