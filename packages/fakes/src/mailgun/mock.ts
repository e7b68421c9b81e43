/**
 * Mailgun's own API mock (mailgun-go's `NewMockServer`, packages/envtest/tools/cmd/mailgun-mock), one of
 * the test tools, run as a child process.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ensureTestTools } from '@loopwright/envtest';

/** The mock's binary, built with the test tools on first use on this machine. */
export async function ensureMailgunMockBinary(): Promise<string> {
  return (await ensureTestTools())['mailgun-mock'];
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
