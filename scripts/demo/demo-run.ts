/**
 * Running `pnpm demo` from a test as a user runs it (the real entry point, a child process), and reading
 * what it printed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('main.ts', import.meta.url));
export const NAMESPACE = 'loopwright-demo';
export const NODE_NAME = 'loopwright-demo-node';

/** The variables that choose the demo's cluster: a test sets exactly those it means. */
const CLUSTER_CHOICE = ['KUBECONFIG', 'LOOPWRIGHT_NODE', 'LOOPWRIGHT_DEMO_NODE'];

/** This process's environment with the cluster choice replaced by `choice`. */
export function demoEnv(choice: Record<string, string> = {}): Record<string, string | undefined> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !CLUSTER_CHOICE.includes(key)),
  );
  return { ...env, ...choice };
}

export interface DemoRun {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function runDemo(env: Record<string, string | undefined>): DemoRun {
  const child = spawn(process.execPath, ['--conditions=development', entry], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    }),
  );
  return { child, output: () => output, exited };
}

/** The rows of the last table printed: columns are separated by at least three spaces, as kubectl's. */
function lastTable(output: string): Record<string, { status: string; detail: string }> {
  const lines = output.split('\n');
  const header = lines.findLastIndex((line) =>
    /^KIND\s{3,}NAME\s{3,}STATUS\s{3,}DETAIL\s{3,}AGE$/.test(line),
  );
  assert.ok(header >= 0, 'no table in the output');
  const rows: Record<string, { status: string; detail: string }> = {};
  for (const line of lines.slice(header + 1)) {
    const [kind, , status, detail] = line.split(/\s{3,}/);
    if (!kind || !status || !detail || !['At', 'MailgunCluster', 'Node'].includes(kind)) break;
    rows[kind] = { status, detail };
  }
  return rows;
}

export function assertConverged(output: string): void {
  // Cluster API's own core manager, not the demo, makes the Cluster the MailgunCluster's owner.
  assert.match(
    output,
    new RegExp(
      `^Cluster API v[\\d.]+: its core manager runs on this machine for namespace ${NAMESPACE}`,
      'm',
    ),
  );
  assert.match(output, /^all converged, [\d.]+s after the samples were applied:$/m);
  assert.match(output, /^ {2}MailgunCluster demo: Mailgun accepted 1 request mail for it;/m);
  assert.doesNotMatch(output, /is not from the demo's Mailgun peer/);
  const rows = lastTable(output);
  assert.equal(rows.At?.status, 'DONE/Succeeded');
  assert.match(rows.At.detail, /^exit code 0, pod hello-pod$/);
  assert.equal(rows.MailgunCluster?.status, 'RequestSent');
  assert.match(rows.MailgunCluster.detail, /^message <[^>]+>, Ready=False \(WaitingForFulfilment\)$/);
  assert.equal(rows.Node?.status, 'Initialized');
  assert.match(rows.Node.detail, /^hcloud:\/\/\d+, untainted, instance-type=cpx31, zone=fsn1-dc14$/);
}

/** Every live descendant of `pid` (zombies count as gone), from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // After the command name in parentheses (which may hold spaces): state, ppid, ...
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') continue;
    const list = children.get(Number(ppid)) ?? [];
    list.push(Number(entry));
    children.set(Number(ppid), list);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = children.get(queue.shift() ?? -1) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}
