import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoBuild, goBuildCacheDir, sharedUntilFailure } from '../cached-go-build.ts';

/** The Go module that pins helm (its go.mod is the single source of truth for the version). */
export const helmModuleDir = fileURLToPath(new URL('../../helm/', import.meta.url));

/** Reads the pinned helm version (`helm.sh/helm/v4 vX.Y.Z`) from the module's go.mod. */
export async function pinnedHelmVersion(): Promise<string> {
  const goMod = await readFile(join(helmModuleDir, 'go.mod'), 'utf8');
  const match = /^\s*helm\.sh\/helm\/v4 (v\S+)/m.exec(goMod);
  if (!match?.[1]) throw new Error(`go.mod in ${helmModuleDir} does not pin helm.sh/helm/v4`);
  return match[1];
}

/** Where the built helm is cached: outside the repo, next to the control-plane binaries. */
export function helmCacheRoot(): string {
  return goBuildCacheDir('helm');
}

/**
 * The go build arguments. `-X ...version.version` stamps the release version as helm's Makefile does (a
 * plain build reports only "v4.3"); the same -X with the pinned version is part of the cache key.
 */
function buildArgs(version: string, output: string): string[] {
  const ldflags = `-s -w -X helm.sh/helm/v4/internal/version.version=${version} -X helm.sh/helm/v4/internal/version.gitTreeState=clean`;
  return ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', output, './cmd/helm'];
}

/**
 * Returns the path of the pinned helm binary, building it with the Go toolchain on first use on this
 * machine (about a minute). Memoised per process.
 */
export const ensureHelmBinary = sharedUntilFailure(
  async (options: { log?: (line: string) => void } = {}): Promise<string> => {
    const version = await pinnedHelmVersion();
    const dir = await ensureGoBuild(
      {
        what: `helm ${version}`,
        moduleDir: helmModuleDir,
        cacheName: 'helm',
        settings: buildArgs(version, '').join(' '),
        goBuildArgs: (outDir) => buildArgs(version, join(outDir, 'helm')),
        binaries: ['helm'],
        entryName: (digest) => `helm-${version}-${digest.slice(0, 12)}`,
      },
      options.log,
    );
    return join(dir, 'helm');
  },
);
