/**
 * The kubelet's configuration for a node on this machine: its state, logs and cgroups are its own
 * (root dir, pod log dir, cgroupRoot), it reaches containerd's private socket, and it leaves the
 * machine's iptables and resolver alone.
 */
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface KubeletSettings {
  dir: string;
  nodeName: string;
  nodeAddress: string;
  port: number;
  healthzPort: number;
  containerdSocket: string;
  cgroupRoot: string;
  clientCaFile: string;
}

export function kubeletConfig(settings: KubeletSettings): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    containerRuntimeEndpoint: `unix://${settings.containerdSocket}`,
    // These machines have cgroup v1 only; 1.36 still runs there when told to.
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${settings.cgroupRoot}`,
    address: settings.nodeAddress,
    port: settings.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: settings.healthzPort,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: settings.clientCaFile },
    },
    authorization: { mode: 'Webhook' },
    // No upstream resolver may reach pods: their resolv.conf stays empty (there is no cluster DNS).
    resolvConf: '',
    makeIPTablesUtilChains: false,
    podLogsDir: join(settings.dir, 'pod-logs'),
    failSwapOn: false,
    // The imported images exist nowhere else: never garbage-collect them, never evict for a busy disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    serializeImagePulls: false,
    // A test cluster: react to pod changes quickly.
    nodeStatusUpdateFrequency: '5s',
    syncFrequency: '10s',
  });
}

export function kubeletArgs(settings: KubeletSettings, configPath: string, kubeconfigPath: string): string[] {
  return [
    `--config=${configPath}`,
    `--kubeconfig=${kubeconfigPath}`,
    `--root-dir=${join(settings.dir, 'root')}`,
    `--cert-dir=${join(settings.dir, 'pki')}`,
    `--hostname-override=${settings.nodeName}`,
    `--node-ip=${settings.nodeAddress}`,
    '--v=1',
  ];
}
