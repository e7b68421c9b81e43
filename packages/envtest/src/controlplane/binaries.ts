import { clusterToolNames, ensureTestTools, pinnedTools, type EnsureToolsOptions } from '../tools/tools.ts';

type BinaryName = (typeof clusterToolNames)[number];
export type ControlPlaneBinaries = Record<BinaryName, string>;

export interface PinnedVersions {
  kubernetes: string;
  etcd: string;
}

/** The pinned Kubernetes and etcd versions (packages/envtest/tools/go.mod). */
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
  return Object.fromEntries(clusterToolNames.map((name) => [name, tools[name]])) as ControlPlaneBinaries;
}
