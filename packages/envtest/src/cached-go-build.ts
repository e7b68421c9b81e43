/**
 * The one way this package builds a Go program from a pinned module (the control plane, helm,
 * Prometheus, Mailgun's mock): once per machine, into a cache outside the repo shared by every checkout,
 * under a key that changes with any build input. A build lands in a staging directory that is renamed
 * into place, so concurrent callers (parallel test files or runs) never execute a half-written binary.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { execFile, spawn } from 'node:child_process';
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
  /** Names the build in log lines and errors, e.g. `the test tools`. */
  what: string;
  /** Said once, when the build starts: what it builds, with versions. */
  detail?: string;
  /** The Go module to build in; its .go files, go.mod and go.sum are hashed into the key. */
  moduleDir: string;
  /** The directory under the cache root that holds this program's builds, see {@link goBuildCacheDir}. */
  cacheName: string;
  /**
   * What shapes the binaries besides the module's files (ldflags with the stamped version, tags), hashed
   * into the key. Kept as each caller has always hashed it, so existing caches stay valid.
   */
  settings: string;
  /** The `go build` arguments that write the binaries into `outDir` (`-v` is added, for progress). */
  goBuildArgs(outDir: string): string[];
  /**
   * The `go list -deps` arguments that name every package the build needs, to say how far it has got;
   * without them progress counts the packages compiled only.
   */
  listArgs?: string[];
  /** What to do in the build's directory before it is put in place (rename a binary, say). */
  finish?(outDir: string): Promise<void>;
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

/** How far a build has got: `compiled` packages so far of `total` (those the build needs, cached or not). */
export interface GoBuildProgress {
  compiled: number;
  total: number | undefined;
  elapsedMs: number;
}

/** How often a running build says how far it has got: a build of every test tool takes minutes. */
const PROGRESS_EVERY_MS = 20_000;

/**
 * Returns the directory holding `build.binaries`, running `go build` (CGO off, so the binaries are
 * static) on the first call on this machine for these inputs. While it builds, `log` gets a line every
 * 20 s with the packages compiled so far and the time taken, and `onProgress` every package.
 */
export async function ensureGoBuild(
  build: CachedGoBuild,
  log: (line: string) => void = () => undefined,
  onProgress?: (progress: GoBuildProgress) => void,
): Promise<string> {
  const cacheDir = goBuildCacheDir(build.cacheName);
  const target = join(cacheDir, build.entryName(await inputsDigest(build)));
  const complete = (): boolean => build.binaries.every((name) => existsSync(join(target, name)));
  if (complete()) return target;

  await mkdir(cacheDir, { recursive: true });
  const staging = await mkdtemp(join(cacheDir, '.build-'));
  const started = performance.now();
  log(`building ${build.what} (first use on this machine)${build.detail ? `: ${build.detail}` : ''}`);
  try {
    const total = build.listArgs ? await countPackages(build) : undefined;
    const [command = 'build', ...rest] = build.goBuildArgs(staging);
    await goBuild(build, [command, '-v', ...rest], total, started, log, onProgress);
    await build.finish?.(staging);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  try {
    await rename(staging, target);
  } catch (error) {
    // Another process finished the same build first; its binaries are identical.
    await rm(staging, { recursive: true, force: true });
    if (!complete()) throw error;
  }
  log(`${build.what} build took ${seconds(performance.now() - started)} -> ${target}`);
  return target;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** How many packages `go list -deps` names for the build (module downloads happen here, if any). */
async function countPackages(build: CachedGoBuild): Promise<number> {
  const { stdout } = await run('go', build.listArgs ?? [], {
    cwd: build.moduleDir,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CGO_ENABLED: '0' },
  });
  return stdout.split('\n').filter((line) => line.trim()).length;
}

/**
 * Runs `go build -v`, which names each package on stderr as it compiles it, counting them. Fails with the
 * end of stderr (where the compiler's errors are).
 */
async function goBuild(
  build: CachedGoBuild,
  args: string[],
  total: number | undefined,
  started: number,
  log: (line: string) => void,
  onProgress: ((progress: GoBuildProgress) => void) | undefined,
): Promise<void> {
  const child = spawn('go', args, {
    cwd: build.moduleDir,
    env: { ...process.env, CGO_ENABLED: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let compiled = 0;
  let stderr = '';
  const progress = (): GoBuildProgress => ({ compiled, total, elapsedMs: performance.now() - started });
  const say = () => {
    const { elapsedMs } = progress();
    const of = total === undefined ? '' : ` of ${total}`;
    log(`still building ${build.what}: ${compiled}${of} packages compiled, ${seconds(elapsedMs)}`);
  };
  const ticker = setInterval(say, PROGRESS_EVERY_MS);
  let pending = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-16_000);
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    // A package line is an import path alone; the compiler's errors have spaces or start with `#`.
    compiled += lines.filter((line) => /^[^\s#]+$/.test(line)).length;
    onProgress?.(progress());
  });
  try {
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    if (code !== 0)
      throw new Error(`building ${build.what} failed (${signal ?? `exit ${code}`}):\n${stderr.slice(-4000)}`);
  } finally {
    clearInterval(ticker);
  }
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
