import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Go module that pins helm (its go.mod is the single source of truth for the version). */
export const helmModuleDir = fileURLToPath(new URL('../../helm/', import.meta.url));

/** Reads the pinned helm version (`helm.sh/helm/v4 vX.Y.Z`) from the module's go.mod. */
export async function pinnedHelmVersion(): Promise<string> {
  const goMod = await readFile(join(helmModuleDir, 'go.mod'), 'utf8');
  const match = /^\s*helm\.sh\/helm\/v4 (v\S+)/m.exec(goMod);
  if (!match?.[1]) throw new Error(`go.mod in ${helmModuleDir} does not pin helm.sh/helm/v4`);
  return match[1];
}

/**
 * Where the built helm is cached: outside the repo, next to the control-plane binaries (same
 * LOOPWRIGHT_CACHE_DIR / XDG_CACHE_HOME rules as controlplane/binaries.ts).
 */
export function helmCacheRoot(): string {
  const base =
    process.env.LOOPWRIGHT_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loopwright');
  return join(base, 'helm');
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && (e.name.endsWith('.go') || e.name === 'go.mod' || e.name === 'go.sum'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * The go build flags. `-X ...version.version` stamps the release version as helm's Makefile does (a
 * plain build reports only "v4.3"); the same -X with the pinned version is part of the cache key below.
 */
function buildArgs(version: string, output: string): string[] {
  const ldflags = `-s -w -X helm.sh/helm/v4/internal/version.version=${version} -X helm.sh/helm/v4/internal/version.gitTreeState=clean`;
  return ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', output, './cmd/helm'];
}

/** Cache key: the pinned version plus a hash of every build input, the Go toolchain version and flags included. */
async function cacheKey(version: string): Promise<string> {
  const hash = createHash('sha256');
  const { stdout: goVersion } = await run('go', ['env', 'GOVERSION']);
  hash.update(goVersion);
  hash.update(buildArgs(version, '').join(' '));
  for (const file of await sourceFiles(helmModuleDir)) {
    hash.update(relative(helmModuleDir, file));
    hash.update(await readFile(file));
  }
  return `helm-${version}-${hash.digest('hex').slice(0, 12)}`;
}

let pending: Promise<string> | undefined;

/**
 * Returns the path of the pinned helm binary, building it with the Go toolchain on first use on this
 * machine (about a minute). The build lands in a temporary directory that is renamed into place, so
 * concurrent callers (parallel test files or runs) never execute a half-written binary. Memoised per
 * process.
 */
export function ensureHelmBinary(options: { log?: (line: string) => void } = {}): Promise<string> {
  pending ??= build(options.log ?? (() => undefined)).catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

async function build(log: (line: string) => void): Promise<string> {
  const version = await pinnedHelmVersion();
  const target = join(helmCacheRoot(), await cacheKey(version));
  const binary = join(target, 'helm');
  if (existsSync(binary)) return binary;

  await mkdir(helmCacheRoot(), { recursive: true });
  const staging = await mkdtemp(join(helmCacheRoot(), '.build-'));
  const started = performance.now();
  log(`building helm ${version} (first use on this machine)`);
  try {
    await run('go', buildArgs(version, join(staging, 'helm')), {
      cwd: helmModuleDir,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, CGO_ENABLED: '0' },
    });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`building helm failed:\n${stderr.slice(-4000)}`, { cause: error });
  }
  try {
    await rename(staging, target);
  } catch (error) {
    // Another process finished the same build first; its binary is identical.
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(binary)) throw error;
  }
  log(`helm build took ${((performance.now() - started) / 1000).toFixed(1)} s -> ${binary}`);
  return binary;
}
