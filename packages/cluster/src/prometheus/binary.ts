/**
 * A real Prometheus with Kubernetes service discovery, for the e2e suites (Debian's prometheus package is
 * built without it): one of the test tools, built with only the Kubernetes discoverer (plus the file and
 * HTTP ones Prometheus always includes). The HTTP API is all the tests use.
 */
import { ensureTestTools, pinnedTools, type EnsureToolsOptions } from '@loopwright/envtest';

export interface PinnedPrometheusVersion {
  /** The Go module's version, e.g. `v0.314.0` (Prometheus tags its Go module v0.3XY.Z for 3.XY.Z). */
  module: string;
  /** The release it is, from the module's own VERSION file, e.g. `3.14.0`: what `--version` prints. */
  release: string;
}

/** The pinned Prometheus (packages/envtest/tools/go.mod). */
export async function pinnedPrometheusVersion(): Promise<PinnedPrometheusVersion> {
  return (await pinnedTools()).prometheus;
}

/** Returns the path of the pinned Prometheus, building the test tools on first use on this machine. */
export async function ensurePrometheusBinary(options: EnsureToolsOptions = {}): Promise<string> {
  return (await ensureTestTools(options)).prometheus;
}
