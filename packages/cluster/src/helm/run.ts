import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureHelmBinary } from './binary.ts';

export interface HelmOptions {
  /** Kubeconfig for commands that talk to a cluster (`install`, `status`...); sets `KUBECONFIG`. */
  kubeconfig?: string;
  /** Working directory (relative chart paths resolve against it). Default: the process's. */
  cwd?: string;
  /** Kill helm after this long. Default 120 s. */
  timeoutMs?: number;
}

export interface HelmResult {
  stdout: string;
  stderr: string;
}

/** helm exited non-zero (or was killed); `stderr` carries helm's own message. */
export class HelmError extends Error {
  override readonly name = 'HelmError';
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  constructor(args: readonly string[], exitCode: number | null, stdout: string, stderr: string) {
    super(`helm ${args.join(' ')} exited with ${exitCode ?? 'a signal'}: ${stderr.trim()}`);
    this.exitCode = exitCode;
    this.stdout = stdout;
    this.stderr = stderr;
  }
}

// helm keeps repositories, plugins and a registry config under XDG dirs; tests must neither read the
// developer's ~/.config/helm nor write into it, so every run of this process shares one private home.
// It is removed when the process exits.
let helmHome: string | undefined;
function isolatedEnv(): Record<string, string> {
  if (helmHome === undefined) {
    const home = mkdtempSync(join(tmpdir(), 'loopwright-helm-'));
    process.once('exit', () => {
      rmSync(home, { recursive: true, force: true });
    });
    helmHome = home;
  }
  return {
    HELM_CACHE_HOME: join(helmHome, 'cache'),
    HELM_CONFIG_HOME: join(helmHome, 'config'),
    HELM_DATA_HOME: join(helmHome, 'data'),
  };
}

/**
 * Runs the pinned helm (built on first use, see {@link ensureHelmBinary}) with `args`. Resolves with its
 * output when it exits 0, rejects with {@link HelmError} otherwise. The environment is the caller's minus
 * any `KUBECONFIG` (unless `kubeconfig` is given) and with private helm state dirs, so a stray cluster
 * config can never be the target of a test's install.
 */
export async function helm(args: readonly string[], options: HelmOptions = {}): Promise<HelmResult> {
  const binary = await ensureHelmBinary();
  const env: NodeJS.ProcessEnv = { ...process.env, ...isolatedEnv() };
  delete env.KUBECONFIG;
  if (options.kubeconfig !== undefined) env.KUBECONFIG = options.kubeconfig;
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      args,
      {
        env,
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error) {
          const code = typeof error.code === 'number' ? error.code : null;
          reject(new HelmError(args, code, stdout, stderr));
        } else resolve({ stdout, stderr });
      },
    );
  });
}
