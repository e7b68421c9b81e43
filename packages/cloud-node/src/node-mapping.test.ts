import type { Server } from '@loopwright/hcloud';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalIp, ipv6HostAddress } from './ip.ts';
import { applyProvidedNodeIp, serverAddresses, serverLabels, zoneForLocation } from './node-mapping.ts';

function server(overrides: Partial<Server> = {}): Server {
  return {
    id: 42,
    name: 'worker-1',
    status: 'running',
    created: null,
    server_type: { name: 'cx22' },
    location: {
      id: 1,
      name: 'nbg1',
      description: null,
      country: null,
      city: null,
      network_zone: 'eu-central',
    },
    public_net: { ipv4: { ip: '5.75.1.2' }, ipv6: { ip: '2a01:4f8:c0c:1::/64' } },
    private_net: [
      { network: 7, ip: '10.0.0.5', alias_ips: [], mac_address: null },
      { network: 8, ip: '10.1.0.5', alias_ips: [], mac_address: null },
    ],
    labels: {},
    ...overrides,
  };
}

describe('serverLabels', () => {
  it('sets GA and beta keys, the legacy datacenter as zone, and provided-by', () => {
    assert.deepEqual(serverLabels(server(), { zoneLabels: true }), {
      'instance.hetzner.cloud/provided-by': 'cloud',
      'node.kubernetes.io/instance-type': 'cx22',
      'beta.kubernetes.io/instance-type': 'cx22',
      'topology.kubernetes.io/region': 'nbg1',
      'failure-domain.beta.kubernetes.io/region': 'nbg1',
      'topology.kubernetes.io/zone': 'nbg1-dc3',
      'failure-domain.beta.kubernetes.io/zone': 'nbg1-dc3',
    });
  });

  it('zone labels can be switched off', () => {
    const labels = serverLabels(server(), { zoneLabels: false });
    assert.equal(labels['topology.kubernetes.io/zone'], undefined);
    assert.equal(labels['failure-domain.beta.kubernetes.io/zone'], undefined);
    assert.equal(labels['topology.kubernetes.io/region'], 'nbg1');
  });

  it('missing server_type or location leave their labels out instead of inventing values', () => {
    assert.deepEqual(serverLabels(server({ server_type: null, location: null }), { zoneLabels: true }), {
      'instance.hetzner.cloud/provided-by': 'cloud',
    });
  });

  it('maps every legacy location and passes unknown ones through', () => {
    const zones = Object.fromEntries(
      ['nbg1', 'hel1', 'fsn1', 'ash', 'hil', 'sin', 'xyz9'].map((name) => [name, zoneForLocation({ name })]),
    );
    assert.deepEqual(zones, {
      nbg1: 'nbg1-dc3',
      hel1: 'hel1-dc2',
      fsn1: 'fsn1-dc14',
      ash: 'ash-dc1',
      hil: 'hil-dc1',
      sin: 'sin-dc1',
      xyz9: 'xyz9',
    });
  });
});

describe('serverAddresses', () => {
  it('ipv4 (default): Hostname and public IPv4 only', () => {
    assert.deepEqual(serverAddresses(server(), { family: 'ipv4', networkId: undefined }), [
      { type: 'Hostname', address: 'worker-1' },
      { type: 'ExternalIP', address: '5.75.1.2' },
    ]);
  });

  it('ipv6: the /64 with ::1 as host address', () => {
    assert.deepEqual(serverAddresses(server(), { family: 'ipv6', networkId: undefined }), [
      { type: 'Hostname', address: 'worker-1' },
      { type: 'ExternalIP', address: '2a01:4f8:c0c:1::1' },
    ]);
  });

  it('dualstack: IPv4 first, then IPv6, then the InternalIP of HCLOUD_NETWORK only', () => {
    assert.deepEqual(serverAddresses(server(), { family: 'dualstack', networkId: 8 }), [
      { type: 'Hostname', address: 'worker-1' },
      { type: 'ExternalIP', address: '5.75.1.2' },
      { type: 'ExternalIP', address: '2a01:4f8:c0c:1::1' },
      { type: 'InternalIP', address: '10.1.0.5' },
    ]);
  });

  it('IPv6-only server (ipv4: null) in ipv4 mode: only the Hostname (and private IP)', () => {
    const s = server({ public_net: { ipv4: null, ipv6: { ip: '2001:db8::/64' } } });
    assert.deepEqual(serverAddresses(s, { family: 'ipv4', networkId: 7 }), [
      { type: 'Hostname', address: 'worker-1' },
      { type: 'InternalIP', address: '10.0.0.5' },
    ]);
    assert.deepEqual(serverAddresses(s, { family: 'dualstack', networkId: undefined })[1], {
      type: 'ExternalIP',
      address: '2001:db8::1',
    });
  });

  it('private-only server: no public addresses; a network entry without ip is skipped', () => {
    const s = server({
      public_net: { ipv4: null, ipv6: null },
      private_net: [{ network: 7, ip: null, alias_ips: [], mac_address: null }],
    });
    assert.deepEqual(serverAddresses(s, { family: 'dualstack', networkId: 7 }), [
      { type: 'Hostname', address: 'worker-1' },
    ]);
  });

  it('a network the server is not attached to adds nothing', () => {
    assert.equal(serverAddresses(server(), { family: 'ipv4', networkId: 99 }).length, 2);
  });
});

describe('applyProvidedNodeIp', () => {
  const addresses = serverAddresses(server(), { family: 'dualstack', networkId: 7 });

  it('no annotation: unchanged', () => {
    assert.deepEqual(applyProvidedNodeIp(addresses, undefined), { ok: true, addresses });
  });

  it('the provided IP goes first and is the only address of its type', () => {
    const result = applyProvidedNodeIp(addresses, '2a01:4f8:c0c:1:0::1');
    assert.deepEqual(result, {
      ok: true,
      addresses: [
        { type: 'ExternalIP', address: '2a01:4f8:c0c:1::1' },
        { type: 'Hostname', address: 'worker-1' },
        { type: 'InternalIP', address: '10.0.0.5' },
      ],
    });
  });

  it('a dual-stack pair enforces both', () => {
    const result = applyProvidedNodeIp(addresses, '10.0.0.5,5.75.1.2');
    assert.ok(result.ok);
    assert.deepEqual(result.addresses, [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'ExternalIP', address: '5.75.1.2' },
      { type: 'Hostname', address: 'worker-1' },
    ]);
  });

  it('an IP the server does not have fails with a reason naming it', () => {
    const result = applyProvidedNodeIp(addresses, '192.168.1.1');
    assert.equal(result.ok, false);
    assert.match(
      (result as { reason: string }).reason,
      /192\.168\.1\.1 is not an address of the server \(server addresses: 5\.75\.1\.2, 2a01:4f8:c0c:1::1, 10\.0\.0\.5\)/,
    );
    assert.equal(applyProvidedNodeIp(addresses, 'worker-1').ok, false); // a hostname is not an IP
  });
});

describe('ip helpers', () => {
  it('ipv6HostAddress sets the last bit and formats canonically', () => {
    assert.equal(ipv6HostAddress('2001:db8:1234::/64'), '2001:db8:1234::1');
    assert.equal(ipv6HostAddress('2001:0DB8:0000:0001:0000:0000:0000:0000/64'), '2001:db8:0:1::1');
    assert.equal(ipv6HostAddress('5.75.1.2/32'), undefined);
  });
  it('canonicalIp', () => {
    assert.equal(canonicalIp('2001:DB8::0:1'), '2001:db8::1');
    assert.equal(canonicalIp('::ffff:1.2.3.4'), '::ffff:102:304');
    assert.equal(canonicalIp('10.0.0.1'), '10.0.0.1');
    assert.equal(canonicalIp('nope'), undefined);
  });
});
