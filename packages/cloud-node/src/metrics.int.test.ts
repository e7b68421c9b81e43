/**
 * cloud-node's own gauges (metrics.ts), registered as main.ts registers them, read off the Manager's
 * registry while the Node controller initialises Nodes on a real control plane against the fake
 * Hetzner API (cloud-node-controllers.test-support.ts).
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { controllersTestbed, uninitialized } from './cloud-node-controllers.test-support.ts';

describe('cloud-node controllers on a real control plane: metrics', () => {
  const bed = controllersTestbed();
  const { name, createNode } = bed;
  const gauge = async (metric: string): Promise<number | undefined> =>
    (await bed.registry.getSingleMetric(metric)?.get())?.values[0]?.value;

  it('a Node without its server stays uninitialized and is counted, with its age, until it is initialised', async () => {
    assert.deepEqual(
      [
        await gauge('loopwright_nodes_uninitialized'),
        await gauge('loopwright_node_uninitialized_oldest_seconds'),
      ],
      [0, 0],
    );
    await createNode(name('waiting'), { taints: [uninitialized] });
    // Tainted too, but outside the controllers' node selector: not theirs to count.
    await createNode(name('elsewhere'), { taints: [uninitialized], inRun: false });
    await eventually(async () => {
      assert.equal(await gauge('loopwright_nodes_uninitialized'), 1);
      assert.ok(((await gauge('loopwright_node_uninitialized_oldest_seconds')) ?? 0) > 0);
    });
    // The Node's server appears: the controller initialises the Node, which leaves both gauges at 0.
    bed.fake.servers.add({
      name: name('waiting'),
      server_type: 'cpx31',
      location: 'fsn1',
      private_net: [
        { network: bed.networkId, ip: '10.0.0.9', alias_ips: [], mac_address: '86:00:00:00:00:09' },
      ],
    });
    await eventually(
      async () => {
        assert.equal(await gauge('loopwright_nodes_uninitialized'), 0);
        assert.equal(await gauge('loopwright_node_uninitialized_oldest_seconds'), 0);
      },
      { timeoutMs: 20_000 },
    );
  });
});
