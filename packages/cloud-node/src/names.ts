/** The well-known keys this controller reads and writes (the same as HCCM and k8s.io/cloud-provider). */

/** Set by kubelet `--cloud-provider=external`; only the Node controller removes it, after initialising. */
export const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
/** Added to NotReady Nodes whose server is `off`; removed when the Node is Ready again. */
export const SHUTDOWN_TAINT = 'node.cloudprovider.kubernetes.io/shutdown';
/** kubelet `--node-ip` with an external cloud provider: the address(es) that must win. */
export const PROVIDED_NODE_IP_ANNOTATION = 'alpha.kubernetes.io/provided-node-ip';

export const LABELS = {
  instanceType: 'node.kubernetes.io/instance-type',
  instanceTypeBeta: 'beta.kubernetes.io/instance-type',
  region: 'topology.kubernetes.io/region',
  regionBeta: 'failure-domain.beta.kubernetes.io/region',
  zone: 'topology.kubernetes.io/zone',
  zoneBeta: 'failure-domain.beta.kubernetes.io/zone',
  providedBy: 'instance.hetzner.cloud/provided-by',
} as const;

/** `reportingController` of every Event this process records. */
export const REPORTING_CONTROLLER = 'loopwright.dev/cloud-node';
