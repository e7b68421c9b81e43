import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideInitialisation,
  decideNode,
  decideRefresh,
  initialisationPatch,
  type NodeMapping,
} from './decide-node.ts';
import { server } from './fake-node-api.test-support.ts';
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT } from './names.ts';
import type { Node, Taint } from './node.ts';
import type { NodeAddress } from './node-mapping.ts';
import { EventReason } from './reasons.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const uninitialized: Taint = { key: UNINITIALIZED_TAINT, effect: 'NoSchedule' };
const other: Taint = { key: 'other', effect: 'NoExecute' };
const mapping: NodeMapping = { addressFamily: 'ipv4', networkId: undefined, zoneLabels: false };
const KEEPS = `the Node keeps the ${UNINITIALIZED_TAINT} taint`;

function node(
  options: {
    providerID?: string;
    taints?: Taint[];
    created?: string;
    providedIp?: string;
    addresses?: NodeAddress[];
  } = {},
): Node {
  return {
    metadata: {
      name: 'worker-1',
      ...(options.created ? { creationTimestamp: options.created } : {}),
      ...(options.providedIp ? { annotations: { [PROVIDED_NODE_IP_ANNOTATION]: options.providedIp } } : {}),
    },
    spec: { ...(options.providerID ? { providerID: options.providerID } : {}), taints: options.taints ?? [] },
    ...(options.addresses ? { status: { addresses: options.addresses } } : {}),
  };
}

describe('decideNode', () => {
  const decide = (n: Node) => decideNode(n, { monitorPeriodMs: 5000, now: NOW });

  it('foreign, Robot and malformed providerIDs: none, tainted or not', () => {
    for (const providerID of ['aws:///x/i-1', 'hrobot://5', 'hcloud://bm-5', 'hcloud://0x1'])
      for (const taints of [[], [uninitialized]])
        assert.deepEqual(decide(node({ providerID, taints })), {
          action: 'none',
          reason: `providerID ${providerID} is not ours`,
        });
  });

  it('tainted with a providerID: initialise by id, from any snapshot holding the server', () => {
    assert.deepEqual(decide(node({ providerID: 'hcloud://42', taints: [uninitialized] })), {
      action: 'initialise',
      ref: { id: 42 },
      maxAgeMs: Infinity,
    });
  });

  it('tainted without a providerID: initialise by name, from data taken after the Node was created', () => {
    const byName = (created?: string) =>
      decide(node({ taints: [uninitialized], ...(created ? { created } : {}) }));
    assert.deepEqual(byName('2025-12-31T23:59:57Z'), {
      action: 'initialise',
      ref: { name: 'worker-1' },
      maxAgeMs: 2000,
    });
    assert.deepEqual(byName('2025-12-31T23:00:00Z'), {
      action: 'initialise',
      ref: { name: 'worker-1' },
      maxAgeMs: 5000,
    });
    assert.deepEqual(byName(undefined), { action: 'initialise', ref: { name: 'worker-1' }, maxAgeMs: 5000 });
    assert.deepEqual(byName('not a time'), {
      action: 'initialise',
      ref: { name: 'worker-1' },
      maxAgeMs: 5000,
    });
  });

  it('initialised (no taint, hcloud providerID): refresh the addresses', () => {
    assert.deepEqual(decide(node({ providerID: 'hcloud://42', taints: [other] })), {
      action: 'refresh-addresses',
      serverID: 42,
    });
  });

  it('neither taint nor providerID (or no spec at all): none', () => {
    for (const n of [node({ taints: [other] }), { metadata: { name: 'worker-1' } }])
      assert.deepEqual(decide(n), {
        action: 'none',
        reason: 'neither a providerID nor the uninitialized taint',
      });
  });
});

describe('decideInitialisation', () => {
  it('unknown because the API fails: wait, with a Warning naming the failure', () => {
    assert.deepEqual(
      decideInitialisation(
        node(),
        { id: 42 },
        { state: 'unknown', retryAfterMs: 3000, reason: '503 unavailable', cause: 'api-error' },
        mapping,
      ),
      {
        action: 'wait',
        retryAfterMs: 3000,
        reason: '503 unavailable',
        warning: `cannot look up the Hetzner Cloud server: 503 unavailable; ${KEEPS}`,
      },
    );
  });

  it('unknown because of the budget: wait, no Warning', () => {
    assert.deepEqual(
      decideInitialisation(
        node(),
        { id: 42 },
        { state: 'unknown', retryAfterMs: 3000, reason: 'budget', cause: 'budget' },
        mapping,
      ),
      { action: 'wait', retryAfterMs: 3000, reason: 'budget' },
    );
  });

  it('gone: ServerNotFound naming what was looked for', () => {
    const gone = { state: 'gone', fetchedAt: NOW } as const;
    assert.deepEqual(decideInitialisation(node({ providerID: 'hcloud://42' }), { id: 42 }, gone, mapping), {
      action: 'fail',
      reason: EventReason.ServerNotFound,
      note: `no Hetzner Cloud server with id 42 (providerID hcloud://42); ${KEEPS}`,
    });
    assert.deepEqual(decideInitialisation(node(), { name: 'worker-1' }, gone, mapping), {
      action: 'fail',
      reason: EventReason.ServerNotFound,
      note: `no Hetzner Cloud server named "worker-1" (the Node has no providerID, so it is matched by name); ${KEEPS}`,
    });
  });

  it('exists, but the provided-node-ip is not its address: ProvidedNodeIPNotFound', () => {
    const step = decideInitialisation(
      node({ providedIp: '192.0.2.1' }),
      { name: 'worker-1' },
      { state: 'exists', server: server(), fetchedAt: NOW },
      mapping,
    );
    assert.deepEqual(step, {
      action: 'fail',
      reason: EventReason.ProvidedNodeIPNotFound,
      note: `provided-node-ip 192.0.2.1 is not an address of the server (server addresses: 5.75.1.2); ${KEEPS}`,
    });
  });

  it('exists: initialise with its providerID, labels (as configured) and addresses', () => {
    const s = server();
    assert.deepEqual(
      decideInitialisation(
        node(),
        { name: 'worker-1' },
        { state: 'exists', server: s, fetchedAt: NOW },
        mapping,
      ),
      {
        action: 'initialise',
        server: s,
        providerID: 'hcloud://42',
        labels: {
          'instance.hetzner.cloud/provided-by': 'cloud',
          'node.kubernetes.io/instance-type': 'cx22',
          'beta.kubernetes.io/instance-type': 'cx22',
          'topology.kubernetes.io/region': 'nbg1',
          'failure-domain.beta.kubernetes.io/region': 'nbg1',
        },
        addresses: [
          { type: 'Hostname', address: 'worker-1' },
          { type: 'ExternalIP', address: '5.75.1.2' },
        ],
      },
    );
  });
});

describe('initialisationPatch', () => {
  const step = { server: server(), providerID: 'hcloud://42', labels: { a: 'b' } };

  it('unset providerID: sets it, the labels, and the taints without the uninitialized one', () => {
    assert.deepEqual(initialisationPatch(node({ taints: [other, uninitialized] }), step), {
      metadata: { labels: { a: 'b' } },
      spec: { providerID: 'hcloud://42', taints: [other] },
    });
  });

  it('the same server’s providerID: not written again', () => {
    assert.deepEqual(
      initialisationPatch(node({ providerID: 'hcloud://42', taints: [uninitialized] }), step),
      {
        metadata: { labels: { a: 'b' } },
        spec: { taints: [] },
      },
    );
  });

  it('already initialised (no taint): no patch', () => {
    assert.equal(initialisationPatch(node({ providerID: 'hcloud://42' }), step), undefined);
    assert.equal(initialisationPatch(node(), step), undefined);
    assert.equal(initialisationPatch({ metadata: { name: 'worker-1' } }, step), undefined);
  });

  it('another server’s, or a foreign, providerID: no patch', () => {
    for (const providerID of ['hcloud://43', 'aws:///x/i-1'])
      assert.equal(initialisationPatch(node({ providerID, taints: [uninitialized] }), step), undefined);
  });
});

describe('decideRefresh', () => {
  const current: NodeAddress[] = [
    { type: 'Hostname', address: 'worker-1' },
    { type: 'ExternalIP', address: '5.75.1.2' },
  ];

  it('server not in the snapshot: none', () => {
    assert.deepEqual(decideRefresh(node({ addresses: current }), undefined, mapping), {
      action: 'none',
      reason: 'server not in the snapshot',
    });
  });

  it('same addresses: none; changed (or none yet): update', () => {
    assert.deepEqual(decideRefresh(node({ addresses: current }), server(), mapping), {
      action: 'none',
      reason: 'addresses unchanged',
    });
    const moved = server({ public_net: { ipv4: { ip: '5.75.9.9' }, ipv6: null } });
    const expected = {
      action: 'update-addresses',
      addresses: [
        { type: 'Hostname', address: 'worker-1' },
        { type: 'ExternalIP', address: '5.75.9.9' },
      ],
    };
    assert.deepEqual(decideRefresh(node({ addresses: current }), moved, mapping), expected);
    assert.deepEqual(decideRefresh(node(), moved, mapping), expected);
  });

  it('a provided-node-ip the server lacks: warn', () => {
    assert.deepEqual(
      decideRefresh(node({ providedIp: '192.0.2.1', addresses: current }), server(), mapping),
      {
        action: 'warn',
        note: 'provided-node-ip 192.0.2.1 is not an address of the server (server addresses: 5.75.1.2)',
      },
    );
  });
});
