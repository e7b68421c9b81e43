/**
 * What one process costs, read from Linux's /proc: CPU time (user + system, every thread) from its spawn
 * until it is ready, its resident memory once it has settled, and the wall time of a command that exits.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** Clock ticks per second, the unit of /proc/<pid>/stat's CPU times. */
const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3,
  // utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** A /proc/<pid>/status size in MB (10^6 bytes, as the targets count); /proc's "kB" are KiB. */
function statusMB(status: string, pid: number, field: 'VmRSS' | 'RssAnon'): number {
  const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  if (kib === undefined) throw new Error(`/proc/${pid}/status has no ${field}`);
  return (Number(kib) * 1024) / 1e6;
}

export interface Command {
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export interface Footprint {
  /** CPU time from spawn to ready. */
  readyCpuMs: number;
  /** Resident set after ready and `settleMs` of idling. */
  idleRssMB: number;
  /**
   * Its anonymous part (heap, stacks, malloc): the rest is file-backed, mostly the node binary's pages,
   * which every Node process maps alike and whose resident share varies with the kernel and the page
   * cache (bare Node idled at 46 MB on one day and 62 MB on another, on the same machine).
   */
  idleRssAnonMB: number;
}

/**
 * Starts `command` with this Node, waits until `isReady()` (polled every 10 ms) and reads its CPU time,
 * lets it idle for `settleMs` and reads its RSS, then stops it with SIGTERM.
 */
export async function measureStart(
  command: Command,
  isReady: (output: string) => Promise<boolean>,
  settleMs: number,
): Promise<Footprint> {
  const child = spawn(process.execPath, command.args, {
    cwd: command.cwd,
    env: command.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = once(child, 'exit');
  const { pid } = child;
  try {
    if (pid === undefined) throw new Error(`cannot start ${command.args.join(' ')}`);
    const deadline = performance.now() + 60_000;
    while (!(await isReady(output))) {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before ready:\n${output}`);
      if (performance.now() > deadline) throw new Error(`not ready within 60 s:\n${output}`);
      await sleep(10);
    }
    const readyCpuMs = await cpuMs(pid);
    await sleep(settleMs);
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} while idle:\n${output}`);
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return {
      readyCpuMs,
      idleRssMB: statusMB(status, pid, 'VmRSS'),
      idleRssAnonMB: statusMB(status, pid, 'RssAnon'),
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** Wall time of a command that exits by itself (0, or it throws). */
export async function measureExit(command: Command): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, command.args, {
    cwd: command.cwd,
    env: command.env,
    stdio: 'ignore',
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`${command.args.join(' ')} exited with ${code}`);
  return wallMs;
}
