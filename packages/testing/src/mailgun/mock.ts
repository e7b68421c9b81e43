/**
 * Mailgun's own API mock (mailgun-go's `NewMockServer`, Go module packages/testing/mailgun-mock), built
 * once per machine into a cache outside the repo and run as a child process.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const mailgunMockModuleDir = fileURLToPath(new URL('../../mailgun-mock/', import.meta.url));

function cacheRoot(): string {
  const base =
    process.env.LOOPWRIGHT_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loopwright');
  return join(base, 'mailgun-mock');
}

/** The mock's binary, built with the Go toolchain on first use; keyed by Go version, go.mod, go.sum and main.go. */
export async function ensureMailgunMockBinary(): Promise<string> {
  const hash = createHash('sha256');
  hash.update((await run('go', ['env', 'GOVERSION'])).stdout);
  for (const file of ['go.mod', 'go.sum', 'main.go']) {
    hash.update(file);
    hash.update(await readFile(join(mailgunMockModuleDir, file)));
  }
  const target = join(cacheRoot(), hash.digest('hex').slice(0, 16));
  const binary = join(target, 'mailgun-mock');
  if (existsSync(binary)) return binary;
  await mkdir(cacheRoot(), { recursive: true });
  const staging = await mkdtemp(join(cacheRoot(), '.build-'));
  try {
    await run('go', ['build', '-trimpath', '-o', join(staging, 'mailgun-mock'), '.'], {
      cwd: mailgunMockModuleDir,
      env: { ...process.env, CGO_ENABLED: '0' },
    });
    await rename(staging, target);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another process may have finished the same build first.
    if (!existsSync(binary))
      throw new Error(
        `building the Mailgun mock failed: ${(error as { stderr?: string }).stderr ?? String(error)}`,
        { cause: error },
      );
  }
  return binary;
}

export interface MailgunMock {
  /** The mock's API base including `/v3`, as it prints it (e.g. `http://127.0.0.1:41234/v3`). */
  url: string;
  stop(): Promise<void>;
}

/** Starts the mock; it exits when `stop()` closes its stdin (or the test process dies). */
export async function startMailgunMock(): Promise<MailgunMock> {
  const binary = await ensureMailgunMockBinary();
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', (line) => {
      resolve(line.trim());
    });
    child.once('exit', (code) => {
      reject(new Error(`the Mailgun mock exited (${code}) before printing its URL`));
    });
  });
  lines.close();
  return {
    url,
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
