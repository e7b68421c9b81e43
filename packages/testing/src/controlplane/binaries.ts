import { ensureTestTools, pinnedTools, type EnsureToolsOptions } from '../tools/tools.ts';

export const binaryNames = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  // A node's: the scheduler binds pods to it, the kubelet runs them, kube-proxy serves Services, and
  // pause is the pod sandbox's process.
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
  'pause',
] as const;
export type BinaryName = (typeof binaryNames)[number];
export type ControlPlaneBinaries = Record<BinaryName, string>;

export interface PinnedVersions {
  kubernetes: string;
  etcd: string;
}

/** The pinned Kubernetes and etcd versions (packages/testing/tools/go.mod). */
export async function pinnedVersions(): Promise<PinnedVersions> {
  const { kubernetes, etcd } = await pinnedTools();
  return { kubernetes, etcd };
}

/**
 * Returns the paths of the pinned etcd and Kubernetes binaries (control plane and node), building the
 * test tools with the Go toolchain on first use (see `ensureTestTools`).
 */
export async function ensureControlPlaneBinaries(
  options: EnsureToolsOptions = {},
): Promise<ControlPlaneBinaries> {
  const tools = await ensureTestTools(options);
  return Object.fromEntries(binaryNames.map((name) => [name, tools[name]])) as ControlPlaneBinaries;
}
