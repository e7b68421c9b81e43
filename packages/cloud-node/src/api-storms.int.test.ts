/**
 * The lifecycle controller on a real control plane while the fake Hetzner API fails every request (the
 * set-up and why Nodes of other files stay invisible: cloud-node-controllers.test-support.ts): no Node is
 * deleted while it lasts, the gone server's Node goes after.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MONITOR_MS, controllersTestbed } from './cloud-node-controllers.test-support.ts';

describe('cloud-node controllers on a real control plane: API storms', () => {
  const bed = controllersTestbed();
  const { name, createNode, exists } = bed;

  for (const [i, storm] of (['503', '401', '429'] as const).entries()) {
    it(`API ${storm} storm: zero deletions while it lasts; the gone server's Node goes after`, async () => {
      if (storm === '503') bed.fake.faults.next({ status: 503, times: 1_000_000 });
      else if (storm === '401') bed.fake.faults.unauthorized(true);
      else bed.fake.faults.next({ status: 429, times: 1_000_000 });
      const since = Date.now();
      await createNode(name(`storm${storm}`), {
        providerID: `hcloud://${987_654_321 + i}`,
        ready: 'Unknown',
      });
      await sleep(15 * MONITOR_MS);
      assert.ok(await exists(name(`storm${storm}`)), `deleted during a ${storm} storm`);
      assert.ok(bed.fake.requests.count({ since }) > 0, 'the controller kept asking');
      bed.fake.faults.clear();
      await eventually(
        async () => {
          assert.equal(await exists(name(`storm${storm}`)), false);
        },
        { timeoutMs: 10_000 },
      );
    });
  }
});
