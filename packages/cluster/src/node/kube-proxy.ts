import { stringify } from 'yaml';
import type { NodeNetwork } from './network.ts';

/**
 * kube-proxy in nftables mode, its conntrack settings zeroed so it leaves the machine's conntrack sysctls
 * alone, and NodePorts only on the node's bridge address.
 */
export interface KubeProxyPorts {
  /** /healthz answers 200 once the rules are in place: the node is Ready for Services then. */
  healthz: number;
  metrics: number;
}

export function kubeProxyConfig(
  network: NodeNetwork,
  nodeName: string,
  kubeconfigPath: string,
  ports: KubeProxyPorts,
): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'nftables',
    clientConnection: { kubeconfig: kubeconfigPath },
    hostnameOverride: nodeName,
    bindAddress: network.hostAddress,
    clusterCIDR: network.podSubnet,
    nodePortAddresses: [`${network.hostAddress}/32`],
    healthzBindAddress: `127.0.0.1:${ports.healthz}`,
    metricsBindAddress: `127.0.0.1:${ports.metrics}`,
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
      udpTimeout: '0s',
      udpStreamTimeout: '0s',
    },
  });
}
