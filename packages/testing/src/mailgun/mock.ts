/**
 * Mailgun's own API mock (mailgun-go's `NewMockServer`, Go module packages/testing/mailgun-mock), built
 * once per machine into a cache outside the repo and run as a child process.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ensureGoBuild } from '../cached-go-build.ts';

const mailgunMockModuleDir = fileURLToPath(new URL('../../mailgun-mock/', import.meta.url));

/** The mock's binary, built with the Go toolchain on first use on this machine. */
export async function ensureMailgunMockBinary(): Promise<string> {
  const dir = await ensureGoBuild({
    what: 'the Mailgun mock',
    moduleDir: mailgunMockModuleDir,
    cacheName: 'mailgun-mock',
    // Its only flag, -trimpath, never changed, so it has never been part of the key.
    settings: '',
    goBuildArgs: (outDir) => ['build', '-trimpath', '-o', join(outDir, 'mailgun-mock'), '.'],
    binaries: ['mailgun-mock'],
    entryName: (digest) => digest.slice(0, 16),
  });
  return join(dir, 'mailgun-mock');
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
