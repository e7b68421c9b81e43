/**
 * The production bundles the images ship (`scripts/bundle.sh`, run by the root Dockerfile's build stage):
 * built, inspected and run as the image runs them, with Node alone from outside the repository.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './charts.ts';

const execFileAsync = promisify(execFile);

export interface PackageJson {
  name: string;
  version: string;
  description: string;
  type?: string;
}

export async function readPackageJson(dir: string): Promise<PackageJson> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageJson;
}

/** `scripts/bundle.sh <controller> <outDir>`: the build stage of the Dockerfile, `--build-arg CONTROLLER=<controller>`. */
export async function buildBundle(controller: string, outDir: string): Promise<void> {
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

/**
 * Node's arguments in the image, from the ENTRYPOINT of the root Dockerfile, the same for every controller (exec form:
 * `["/nodejs/bin/node", ...flags, "dist/main.js"]`) without the binary: the bundle runs with exactly them.
 */
export async function imageNodeArgs(controller: string): Promise<string[]> {
  const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  if (entrypoint === undefined) throw new Error(`Dockerfile (${controller}): no exec-form ENTRYPOINT`);
  const [binary, ...args] = JSON.parse(entrypoint) as string[];
  if (binary !== '/nodejs/bin/node') throw new Error(`Dockerfile (${controller}): ENTRYPOINT runs ${binary}`);
  return args;
}

/** Every entry of the bundle, relative to it, directories with a trailing slash, sorted. */
export async function bundleEntries(bundleDir: string): Promise<string[]> {
  const entries = await readdir(bundleDir, { recursive: true, withFileTypes: true });
  return entries
    .map((entry) => {
      const path = relative(bundleDir, join(entry.parentPath, entry.name));
      if (entry.isDirectory()) return `${path}/`;
      if (entry.isFile()) return path;
      return `${path} (neither a file nor a directory)`;
    })
    .sort();
}

/**
 * The environment of a bundle process: exactly `env`, plus PATH. Nothing of the test's own: no
 * NODE_OPTIONS (node:test's `--conditions=development`), no NODE_PATH (pnpm's node shim points it at the
 * workspace's whole store, which would hide a dependency the bundle lacks).
 */
function bundleEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: '/usr/bin:/bin', ...env };
}

/**
 * The image's command line (its ENTRYPOINT, then `args`) in the bundle's directory, with this Node (the
 * real binary: node_modules/.bin/node may be a shell wrapper that sets NODE_PATH).
 */
export async function runBundle(
  controller: string,
  bundleDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [...(await imageNodeArgs(controller)), ...args],
      { cwd: bundleDir, env: bundleEnv(env), timeout: 30_000 },
    );
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

/** Starts the bundle as its image does (its ENTRYPOINT, no arguments). */
export async function startBundle(
  controller: string,
  bundleDir: string,
  env: Record<string, string>,
): Promise<BundleProcess> {
  const child = spawn(process.execPath, await imageNodeArgs(controller), {
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
