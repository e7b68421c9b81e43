import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { atRow, mailgunClusterRow, nodeRow, readyRow, type At, type Node } from './rows.ts';

describe('rows', () => {
  const meta = { name: 'x', creationTimestamp: '2026-05-01T11:59:55Z' };

  it('an At converges when DONE with outcome Succeeded, not before', () => {
    const at = (status: At['status']): At => ({
      metadata: meta,
      spec: { schedule: '2026-05-01T12:00:05Z', command: 'echo hi' },
      ...(status ? { status } : {}),
    });
    assert.equal(atRow('x', undefined).status, '-');
    assert.equal(atRow('x', at(undefined)).converged, false);
    assert.equal(atRow('x', at({ phase: 'RUNNING', podName: 'x-pod' })).converged, false);
    const failed = atRow('x', at({ phase: 'DONE', outcome: 'Failed', exitCode: 2, podName: 'x-pod' }));
    assert.deepEqual(
      [failed.status, failed.detail, failed.converged],
      ['DONE/Failed', 'exit code 2, pod x-pod', false],
    );
    const done = atRow('x', at({ phase: 'DONE', outcome: 'Succeeded', exitCode: 0, podName: 'x-pod' }));
    assert.deepEqual([done.status, done.converged], ['DONE/Succeeded', true]);
  });

  it('a MailgunCluster converges with a message id and RequestSent=True, Ready staying False', () => {
    const sent = mailgunClusterRow('demo', {
      metadata: meta,
      status: {
        messageID: '<m1>',
        conditions: [
          { type: 'RequestSent', status: 'True', reason: 'Sent' },
          { type: 'Ready', status: 'False', reason: 'WaitingForFulfilment' },
        ],
      },
    });
    assert.deepEqual(
      [sent.status, sent.detail, sent.converged],
      ['RequestSent', 'message <m1>, Ready=False (WaitingForFulfilment)', true],
    );
    const unsure = mailgunClusterRow('demo', {
      metadata: meta,
      status: { conditions: [{ type: 'RequestSent', status: 'Unknown', reason: 'ConfirmingDelivery' }] },
    });
    assert.deepEqual([unsure.status, unsure.converged], ['ConfirmingDelivery', false]);
  });

  it('a Node converges with the expected providerID, no uninitialized taint and its labels', () => {
    const node = (spec: Node['spec'], labels: Record<string, string> = {}): Node => ({
      metadata: { ...meta, labels },
      ...(spec ? { spec } : {}),
    });
    const labels = {
      'node.kubernetes.io/instance-type': 'cpx31',
      'topology.kubernetes.io/zone': 'fsn1-dc14',
    };
    const tainted = nodeRow(
      'n',
      node({ taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', effect: 'NoSchedule' }] }),
      'hcloud://1',
    );
    assert.deepEqual([tainted.status, tainted.converged], ['Uninitialized', false]);
    assert.equal(nodeRow('n', node({ providerID: 'hcloud://2' }, labels), 'hcloud://1').converged, false);
    assert.equal(nodeRow('n', node({ providerID: 'hcloud://1' }), 'hcloud://1').converged, false);
    const done = nodeRow('n', node({ providerID: 'hcloud://1' }, labels), 'hcloud://1');
    assert.deepEqual(
      [done.status, done.detail, done.converged],
      ['Initialized', 'hcloud://1, untainted, instance-type=cpx31, zone=fsn1-dc14', true],
    );
  });

  it("another controller's object converges when its Ready condition is True", () => {
    const widget = (status: string, reason: string) => ({
      metadata: meta,
      status: {
        conditions: [
          { type: 'Synced', status: 'True' },
          { type: 'Ready', status, reason },
        ],
      },
    });
    assert.deepEqual(readyRow('Widget', 'x', undefined), {
      kind: 'Widget',
      name: 'x',
      status: '-',
      detail: 'not created yet',
      createdAt: undefined,
      converged: false,
    });
    const fresh = readyRow('Widget', 'x', { metadata: meta });
    assert.deepEqual([fresh.status, fresh.detail, fresh.converged], ['-', 'no Ready condition yet', false]);
    const suspended = readyRow('Widget', 'x', widget('False', 'Suspended'));
    assert.deepEqual(
      [suspended.status, suspended.detail, suspended.converged],
      ['Ready=False', 'Suspended', false],
    );
    const ready = readyRow('Widget', 'x', widget('True', 'Reconciled'));
    assert.deepEqual(ready, {
      kind: 'Widget',
      name: 'x',
      status: 'Ready=True',
      detail: 'Reconciled',
      createdAt: meta.creationTimestamp,
      converged: true,
    });
  });
});
