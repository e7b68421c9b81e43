/**
 * Pure mapping from a Hetzner Cloud server to what the Node should carry: labels and `status.addresses`,
 * exactly as HCCM computes them (so switching controllers changes nothing on existing Nodes).
 */
import type { Location, Server } from '@loopwright/hcloud';
import { canonicalIp, ipv6HostAddress } from './ip.ts';
import { LABELS } from './names.ts';

export type AddressFamily = 'ipv4' | 'ipv6' | 'dualstack';

export interface NodeAddress {
  type: 'Hostname' | 'ExternalIP' | 'InternalIP';
  address: string;
}

/**
 * HCCM's zone value: the legacy datacenter name for the locations that had one datacenter (the
 * `datacenter` object is gone from the API, but existing Nodes and topology constraints use these names).
 */
const LEGACY_DATACENTERS: Readonly<Record<string, string>> = {
  nbg1: 'nbg1-dc3',
  hel1: 'hel1-dc2',
  fsn1: 'fsn1-dc14',
  ash: 'ash-dc1',
  hil: 'hil-dc1',
  sin: 'sin-dc1',
};

export function zoneForLocation(location: Pick<Location, 'name'>): string {
  return LEGACY_DATACENTERS[location.name] ?? location.name;
}

/**
 * The labels initialisation sets. A label whose source field the API omitted (no `server_type`, no
 * `location`) is left out rather than set to a made-up value.
 */
export function serverLabels(server: Server, options: { zoneLabels: boolean }): Record<string, string> {
  const labels: Record<string, string> = { [LABELS.providedBy]: 'cloud' };
  if (server.server_type) {
    labels[LABELS.instanceType] = server.server_type.name;
    labels[LABELS.instanceTypeBeta] = server.server_type.name;
  }
  if (server.location) {
    labels[LABELS.region] = server.location.name;
    labels[LABELS.regionBeta] = server.location.name;
    if (options.zoneLabels) {
      const zone = zoneForLocation(server.location);
      labels[LABELS.zone] = zone;
      labels[LABELS.zoneBeta] = zone;
    }
  }
  return labels;
}

/**
 * HCCM's address list, in its order: Hostname (the server name), public IPv4 (ipv4/dualstack, when the
 * server has one), public IPv6 host address (ipv6/dualstack, when it has one), then the server's IP in
 * the network `networkId` (HCLOUD_NETWORK) as InternalIP.
 */
export function serverAddresses(
  server: Server,
  options: { family: AddressFamily; networkId: number | undefined },
): NodeAddress[] {
  const addresses: NodeAddress[] = [{ type: 'Hostname', address: server.name }];
  const ipv4 = server.public_net.ipv4?.ip;
  if (options.family !== 'ipv6' && ipv4 && ipv4 !== '0.0.0.0')
    addresses.push({ type: 'ExternalIP', address: ipv4 });
  const ipv6 = server.public_net.ipv6?.ip;
  const ipv6Host = ipv6 ? ipv6HostAddress(ipv6) : undefined;
  if (options.family !== 'ipv4' && ipv6Host !== undefined)
    addresses.push({ type: 'ExternalIP', address: ipv6Host });
  if (options.networkId !== undefined) {
    for (const net of server.private_net) {
      if (net.network === options.networkId && net.ip)
        addresses.push({ type: 'InternalIP', address: net.ip });
    }
  }
  return addresses;
}

export type ProvidedIpResult = { ok: true; addresses: NodeAddress[] } | { ok: false; reason: string };

/**
 * Applies kubelet's `--node-ip` (annotation `alpha.kubernetes.io/provided-node-ip`, one IP or a
 * dual-stack pair `a,b`) like k8s.io/cloud-provider's `GetNodeAddressesFromNodeIP`: every provided IP
 * must be among the server's addresses; it goes first, is the only address of its type, and the
 * addresses of other types follow. A provided IP the server does not have fails initialisation:
 * silently dropping it would route traffic to the wrong interface.
 */
export function applyProvidedNodeIp(
  addresses: readonly NodeAddress[],
  annotation: string | undefined,
): ProvidedIpResult {
  if (annotation === undefined || annotation.trim() === '') return { ok: true, addresses: [...addresses] };
  const provided: string[] = [];
  for (const part of annotation.split(',')) {
    const ip = canonicalIp(part);
    if (ip === undefined)
      return {
        ok: false,
        reason: `annotation provided-node-ip "${annotation}" is not a valid IP or IP pair`,
      };
    provided.push(ip);
  }
  const enforced: NodeAddress[] = [];
  const claimedTypes = new Set<NodeAddress['type']>();
  for (const ip of provided) {
    const matches = addresses.filter((a) => a.type !== 'Hostname' && canonicalIp(a.address) === ip);
    if (matches.length === 0) {
      const known = addresses.filter((a) => a.type !== 'Hostname').map((a) => a.address);
      return {
        ok: false,
        reason: `provided-node-ip ${ip} is not an address of the server (server addresses: ${known.join(', ') || 'none'})`,
      };
    }
    for (const match of matches) {
      enforced.push({ type: match.type, address: ip });
      claimedTypes.add(match.type);
    }
  }
  for (const address of addresses) if (!claimedTypes.has(address.type)) enforced.push(address);
  return { ok: true, addresses: enforced };
}

/** Order-sensitive equality: the order is meaningful (the first InternalIP/ExternalIP wins in many tools). */
export function sameAddresses(a: readonly NodeAddress[] | undefined, b: readonly NodeAddress[]): boolean {
  return (
    a !== undefined &&
    a.length === b.length &&
    a.every((x, i) => x.type === b[i]?.type && x.address === b[i].address)
  );
}
