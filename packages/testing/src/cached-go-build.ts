/**
 * The one way this package builds a Go program from a pinned module (the control plane, helm,
 * Prometheus, Mailgun's mock): once per machine, into a cache outside the repo shared by every checkout,
 * under a key that changes with any build input. A build lands in a staging directory that is renamed
 * into place, so concurrent callers (parallel test files or runs) never execute a half-written binary.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `$LOOPWRIGHT_CACHE_DIR/<name>`, by default `~/.cache/loopwright/<name>` (XDG_CACHE_HOME honoured). */
export function goBuildCacheDir(name: string): string {
  const base =
    process.env.LOOPWRIGHT_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loopwright');
  return join(base, name);
}

export interface CachedGoBuild {
  /** Names the build in log lines and errors, e.g. `helm v4.3.1`. */
  what: string;
  /** The Go module to build in; its .go files, go.mod and go.sum are hashed into the key. */
  moduleDir: string;
  /** The directory under the cache root that holds this program's builds, see {@link goBuildCacheDir}. */
  cacheName: string;
  /**
   * What shapes the binaries besides the module's files (ldflags with the stamped version, tags), hashed
   * into the key. Kept as each caller has always hashed it, so existing caches stay valid.
   */
  settings: string;
  /** The `go build` arguments that write the binaries into `outDir`. */
  goBuildArgs(outDir: string): string[];
  /** The files the build leaves in its directory; the cache is hit when all of them exist. */
  binaries: readonly string[];
  /** The cache entry's directory name, given the hex digest of every build input. */
  entryName(inputsDigest: string): string;
}

async function moduleSourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && (e.name.endsWith('.go') || e.name === 'go.mod' || e.name === 'go.sum'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** The digest of the Go toolchain version, the build settings and every source file of the module. */
async function inputsDigest(build: CachedGoBuild): Promise<string> {
  const hash = createHash('sha256');
  const { stdout: goVersion } = await run('go', ['env', 'GOVERSION']);
  hash.update(goVersion);
  hash.update(build.settings);
  for (const file of await moduleSourceFiles(build.moduleDir)) {
    hash.update(relative(build.moduleDir, file));
    hash.update(await readFile(file));
  }
  return hash.digest('hex');
}

/**
 * Returns the directory holding `build.binaries`, running `go build` (CGO off, so the binaries are
 * static) on the first call on this machine for these inputs.
 */
export async function ensureGoBuild(
  build: CachedGoBuild,
  log: (line: string) => void = () => undefined,
): Promise<string> {
  const cacheDir = goBuildCacheDir(build.cacheName);
  const target = join(cacheDir, build.entryName(await inputsDigest(build)));
  const complete = (): boolean => build.binaries.every((name) => existsSync(join(target, name)));
  if (complete()) return target;

  await mkdir(cacheDir, { recursive: true });
  const staging = await mkdtemp(join(cacheDir, '.build-'));
  const started = performance.now();
  log(`building ${build.what} (first use on this machine)`);
  try {
    await run('go', build.goBuildArgs(staging), {
      cwd: build.moduleDir,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, CGO_ENABLED: '0' },
    });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`building ${build.what} failed:\n${stderr.slice(-4000)}`, { cause: error });
  }
  try {
    await rename(staging, target);
  } catch (error) {
    // Another process finished the same build first; its binaries are identical.
    await rm(staging, { recursive: true, force: true });
    if (!complete()) throw error;
  }
  log(`${build.what} build took ${((performance.now() - started) / 1000).toFixed(1)} s -> ${target}`);
  return target;
}

/**
 * Wraps an ensure function so that concurrent and later calls in this process share its one result,
 * and a failure is not remembered (the next call tries again).
 */
export function sharedUntilFailure<A extends unknown[], T>(
  ensure: (...args: A) => Promise<T>,
): (...args: A) => Promise<T> {
  let pending: Promise<T> | undefined;
  return (...args) => {
    pending ??= ensure(...args).catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
