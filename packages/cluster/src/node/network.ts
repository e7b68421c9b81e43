/**
 * The node's network: one bridge with the host's address on the pod subnet, and nothing routed off the
 * machine. Pods get an address on the bridge (CNI bridge + host-local), a route to the pod subnet and
 * one to the Service range through the host; no default route, no masquerading, and `ip_forward` stays
 * as it was. The host reaches pods directly on the bridge, and the Service range is routed onto the
 * bridge too, so a packet for a Service address without a kube-proxy rule dies here instead of taking
 * the machine's default route.
 *
 * A pod reaching a Service whose endpoint is another pod (any in-cluster client: a chart's `helm test`
 * fetching /metrics) needs the host to route the packet, DNATed by kube-proxy, back onto the bridge.
 * IPv4 forwards by the switch of the interface a packet arrives on, so forwarding is turned on for the
 * bridge only (the machine's `ip_forward` untouched; the switch goes with the bridge), and an nftables
 * rule drops whatever the host would forward from the bridge to any other interface: nothing a pod
 * sends leaves the machine, even a pod that adds a route of its own. The machine's ruleset is restored
 * on stop (machine.ts), the rule's table with it.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface NodeNetwork {
  bridge: string;
  /** The host's address on the bridge: the API server and the tests' peers listen here. */
  hostAddress: string;
  /** The pod subnet, e.g. 10.244.0.0/24. */
  podSubnet: string;
  /** The Service range (the API server's --service-cluster-ip-range). */
  serviceRange: string;
}

export const defaultNodeNetwork: NodeNetwork = {
  bridge: 'loopwright0',
  hostAddress: '10.244.0.1',
  podSubnet: '10.244.0.0/24',
  serviceRange: '10.96.0.0/16',
};

/** The nftables table (family inet) that keeps forwarding on the bridge from leaving the machine. */
export const NODE_NFT_TABLE = 'loopwright-node';

const prefixLength = (cidr: string): string => cidr.split('/')[1] ?? '32';

export async function createNodeNetwork(network: NodeNetwork): Promise<void> {
  const ip = (...args: string[]) => run('ip', args);
  await ip('link', 'add', network.bridge, 'type', 'bridge');
  await ip('addr', 'add', `${network.hostAddress}/${prefixLength(network.podSubnet)}`, 'dev', network.bridge);
  await ip('link', 'set', network.bridge, 'up');
  await ip('route', 'add', network.serviceRange, 'dev', network.bridge, 'src', network.hostAddress);
  const nft = (...args: string[]) => run('nft', args);
  await nft('add', 'table', 'inet', NODE_NFT_TABLE);
  await nft(
    'add',
    'chain',
    'inet',
    NODE_NFT_TABLE,
    'forward',
    '{ type filter hook forward priority 0; policy accept; }',
  );
  await nft(
    'add',
    'rule',
    'inet',
    NODE_NFT_TABLE,
    'forward',
    'iifname',
    network.bridge,
    'oifname',
    '!=',
    network.bridge,
    'drop',
  );
  await writeFile(`/proc/sys/net/ipv4/conf/${network.bridge}/forwarding`, '1');
}

/** The CNI configuration list containerd reads (conf_dir): the bridge above, addresses from host-local. */
export function cniConfig(network: NodeNetwork, ipamDataDir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'loopwright',
      plugins: [
        {
          type: 'bridge',
          bridge: network.bridge,
          // Not a gateway: the plugin would set ip_forward=1 and add the host address itself.
          isGateway: false,
          ipMasq: false,
          // A pod reaching itself through a Service address needs its packets sent back out its own port.
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: ipamDataDir,
            ranges: [[{ subnet: network.podSubnet, gateway: network.hostAddress }]],
            routes: [{ dst: network.serviceRange, gw: network.hostAddress }],
          },
        },
      ],
    },
    null,
    2,
  );
}
