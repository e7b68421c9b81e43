/**
 * The real Cluster API core manager (`sigs.k8s.io/cluster-api/core`, the program the upstream image runs)
 * and its module's files, at the version packages/envtest/tools/go.mod pins.
 */
import { ensureTestTools, pinnedTools, type EnsureToolsOptions } from '@loopwright/envtest';

export interface PinnedClusterApi {
  /** The pinned release, e.g. `v1.14.2`. */
  version: string;
  /** The module's files in Go's module cache (read-only): the CRDs and webhook manifests live there. */
  moduleDir: string;
}

export async function pinnedClusterApi(): Promise<PinnedClusterApi> {
  return (await pinnedTools()).clusterApi;
}

/** Returns the path of the pinned manager, building the test tools on first use on this machine. */
export async function ensureClusterApiManager(options: EnsureToolsOptions = {}): Promise<string> {
  return (await ensureTestTools(options))['cluster-api-manager'];
}
