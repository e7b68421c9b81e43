import { ensureTestTools, pinnedTools, type EnsureToolsOptions } from '@loopwright/envtest';

/** The pinned helm version (`helm.sh/helm/v4` in packages/envtest/tools/go.mod). */
export async function pinnedHelmVersion(): Promise<string> {
  return (await pinnedTools()).helm;
}

/** Returns the path of the pinned helm binary, building the test tools on first use on this machine. */
export async function ensureHelmBinary(options: EnsureToolsOptions = {}): Promise<string> {
  return (await ensureTestTools(options)).helm;
}
