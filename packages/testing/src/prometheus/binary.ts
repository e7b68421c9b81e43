/**
 * A real Prometheus with Kubernetes service discovery, for the e2e suites (Debian's prometheus package
 * is built without it). Built from the Go module packages/testing/prometheus pins, with only the
 * Kubernetes discoverer (plus the file and HTTP ones Prometheus always includes) and no web UI assets:
 * the HTTP API is all the tests use.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureGoBuild, sharedUntilFailure } from '../cached-go-build.ts';

const run = promisify(execFile);

/** The Go module that pins Prometheus (its go.mod is the single source of truth for the version). */
export const prometheusModuleDir = fileURLToPath(new URL('../../prometheus/', import.meta.url));

const prometheusModule = 'github.com/prometheus/prometheus';

export interface PinnedPrometheusVersion {
  /** The Go module's version, e.g. `v0.316.0` (Prometheus tags its Go module v0.3XY.Z for 3.XY.Z). */
  module: string;
  /** The release it is, from the module's own VERSION file, e.g. `3.16.0`: what `--version` prints. */
  release: string;
}

/**
 * Reads the pinned module version from go.mod and the release from the module's VERSION file
 * (downloading the module into Go's module cache if it is not there yet; the build needs it anyway).
 */
export async function pinnedPrometheusVersion(): Promise<PinnedPrometheusVersion> {
  const { stdout } = await run('go', ['mod', 'download', '-json', prometheusModule], {
    cwd: prometheusModuleDir,
  });
  const download = JSON.parse(stdout) as { Version?: string; Dir?: string; Error?: string };
  if (!download.Version || !download.Dir)
    throw new Error(
      `go.mod in ${prometheusModuleDir} does not pin ${prometheusModule}: ${download.Error ?? ''}`,
    );
  const release = (await readFile(join(download.Dir, 'VERSION'), 'utf8')).trim();
  return { module: download.Version, release };
}

/**
 * The go build arguments. The tags drop every service discoverer but Kubernetes' (plugins/plugin_*.go
 * in the module). The -X flags stamp the release as Prometheus's own build (.promu.yml) does, so
 * `--version` names it; the module version stands in for the git revision, which the module proxy does
 * not carry. No build user or date: the binary depends on its inputs only, as its cache key does.
 */
function buildArgs(version: PinnedPrometheusVersion, output: string): string[] {
  const pkg = 'github.com/prometheus/common/version';
  const ldflags = `-s -w -X ${pkg}.Version=${version.release} -X ${pkg}.Revision=${version.module}`;
  return [
    'build',
    '-trimpath',
    '-tags=remove_all_sd,enable_kubernetes_sd',
    `-ldflags=${ldflags}`,
    '-o',
    output,
    `${prometheusModule}/cmd/prometheus`,
  ];
}

/**
 * Returns the path of the pinned Prometheus binary, building it with the Go toolchain on first use on
 * this machine (several minutes on 2 cores). Memoised per process.
 */
export const ensurePrometheusBinary = sharedUntilFailure(
  async (options: { log?: (line: string) => void } = {}): Promise<string> => {
    const version = await pinnedPrometheusVersion();
    const dir = await ensureGoBuild(
      {
        what: `Prometheus ${version.release} (Go module ${version.module})`,
        moduleDir: prometheusModuleDir,
        cacheName: 'prometheus',
        settings: buildArgs(version, '').join(' '),
        goBuildArgs: (outDir) => buildArgs(version, join(outDir, 'prometheus')),
        binaries: ['prometheus'],
        entryName: (digest) => `prometheus-${version.release}-${digest.slice(0, 12)}`,
      },
      options.log,
    );
    return join(dir, 'prometheus');
  },
);
