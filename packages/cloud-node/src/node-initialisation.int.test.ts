/**
 * The Node controller initialising Nodes on a real control plane against the fake Hetzner API (the
 * set-up and why Nodes of other files stay invisible: cloud-node-controllers.test-support.ts):
 * providerID, labels, addresses and the taint's removal, and each way initialisation can fail.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REFRESH_MS, controllersTestbed, uninitialized } from './cloud-node-controllers.test-support.ts';
import { UNINITIALIZED_TAINT } from './names.ts';
import { EventReason } from './reasons.ts';

describe('cloud-node controllers on a real control plane: initialisation', () => {
  const bed = controllersTestbed();
  const { name, createNode, getNode, events } = bed;

  it('a tainted Node becomes initialised: providerID, labels, taint removed, addresses, Synced', async () => {
    const server = bed.fake.servers.add({
      name: name('init'),
      server_type: 'cpx31',
      location: 'fsn1',
      private_net: [
        { network: bed.networkId, ip: '10.0.0.7', alias_ips: [], mac_address: '86:00:00:00:00:01' },
      ],
    });
    await createNode(name('init'), { taints: [uninitialized, { key: 'other', effect: 'NoExecute' }] });
    await eventually(async () => {
      const node = await getNode(name('init'));
      assert.equal(node.spec?.providerID, `hcloud://${server.id}`);
      // (the API server's admission adds node.kubernetes.io/not-ready to new Nodes: not ours to judge)
      assert.deepEqual(
        (node.spec.taints ?? []).map((t) => t.key).filter((k) => k !== 'node.kubernetes.io/not-ready'),
        ['other'],
      );
      const labels = node.metadata?.labels ?? {};
      assert.equal(labels['node.kubernetes.io/instance-type'], 'cpx31');
      assert.equal(labels['topology.kubernetes.io/region'], 'fsn1');
      assert.equal(labels['topology.kubernetes.io/zone'], 'fsn1-dc14');
      assert.equal(labels['instance.hetzner.cloud/provided-by'], 'cloud');
      const addresses = node.status?.addresses ?? [];
      assert.deepEqual(
        addresses.map((a) => a.type),
        ['Hostname', 'ExternalIP', 'ExternalIP', 'InternalIP'],
      );
      assert.equal(addresses[3]?.address, '10.0.0.7');
    });
    await eventually(async () => {
      assert.ok(
        (await events(name('init'))).some((e) => e.reason === EventReason.Synced && e.type === 'Normal'),
      );
    });
    // Refresh: a changed IP reaches status.addresses within the refresh period.
    bed.fake.servers.update(server.id, {
      public_net: { ipv4: { id: 1, ip: '5.75.9.9', blocked: false, dns_ptr: 'static.example' } },
    });
    await eventually(
      async () => {
        assert.equal((await getNode(name('init'))).status?.addresses?.[1]?.address, '5.75.9.9');
      },
      { timeoutMs: 4 * REFRESH_MS },
    );
  });

  it('a Node whose server cannot be found keeps its taint and gets a Warning naming the cause', async () => {
    await createNode(name('nosrv'), { taints: [uninitialized] });
    await eventually(async () => {
      assert.ok(
        (await events(name('nosrv'))).some(
          (e) =>
            e.type === 'Warning' &&
            e.reason === EventReason.ServerNotFound &&
            (e.note ?? '').includes(`named "${name('nosrv')}"`),
        ),
      );
    });
    assert.ok((await getNode(name('nosrv'))).spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT));
  });

  it('a provided-node-ip the server does not have fails initialisation with a Warning', async () => {
    bed.fake.servers.add({ name: name('nodeip') });
    await createNode(name('nodeip'), {
      taints: [uninitialized],
      annotations: { 'alpha.kubernetes.io/provided-node-ip': '192.168.77.1' },
    });
    await eventually(async () => {
      assert.ok(
        (await events(name('nodeip'))).some(
          (e) => e.reason === EventReason.ProvidedNodeIPNotFound && (e.note ?? '').includes('192.168.77.1'),
        ),
      );
    });
    assert.equal((await getNode(name('nodeip'))).spec?.providerID, undefined);
  });

  it('a server re-created under the same name: the Node gets the new server, never a cached old one', async () => {
    const old = bed.fake.servers.add({ name: name('recreated') });
    // A Ready Node of the old server keeps address refreshes, and so sweeps, going: wait for a sweep
    // that lists the old server, so the directory holds a snapshot naming it.
    const since = Date.now();
    await createNode(name('recreated-peer'), { providerID: `hcloud://${old.id}`, ready: 'True' });
    await eventually(
      () => {
        assert.ok(bed.fake.requests.count({ endpoint: '/v1/servers', status: 200, since }) > 0);
      },
      { timeoutMs: 4 * REFRESH_MS },
    );
    bed.fake.servers.delete(old.id);
    const fresh = bed.fake.servers.add({ name: name('recreated') });
    await createNode(name('recreated'), { taints: [uninitialized] });
    await eventually(async () => {
      const node = await getNode(name('recreated'));
      assert.equal(
        node.spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT),
        false,
      );
      assert.equal(node.spec.providerID, `hcloud://${fresh.id}`);
      assert.equal(node.status?.addresses?.[1]?.address, fresh.public_net.ipv4?.ip);
    });
  });

  it('an API failure during initialisation is a Warning naming it; the Node is initialised once it heals', async () => {
    const server = bed.fake.servers.add({ name: name('apifail') });
    bed.fake.faults.unauthorized(true);
    try {
      await createNode(name('apifail'), { taints: [uninitialized] });
      await eventually(async () => {
        assert.ok(
          (await events(name('apifail'))).some(
            (e) =>
              e.type === 'Warning' &&
              e.reason === EventReason.HcloudAPIError &&
              /unauthorized/.test(e.note ?? ''),
          ),
        );
      });
      assert.ok((await getNode(name('apifail'))).spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT));
    } finally {
      bed.fake.faults.clear();
    }
    await eventually(async () => {
      assert.equal((await getNode(name('apifail'))).spec?.providerID, `hcloud://${server.id}`);
    });
  });
});
