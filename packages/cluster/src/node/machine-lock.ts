/**
 * One node per machine: the bridge, the cgroup root and the nftables tables are machine-wide. A second
 * `startCluster()` (a parallel test target, say) waits for the first to stop. The lock directory also
 * keeps the machine's state as the holder found it, so that whoever takes the lock after a holder that
 * died without stopping (SIGKILL) can put the machine back first.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MachineState } from './machine.ts';

const lockDir = '/run/lock/loopwright-node';
const ownerFile = join(lockDir, 'owner');
const stateFile = join(lockDir, 'machine-state.json');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface NodeLock {
  /** The machine state a holder that died had saved, to restore before anything else. */
  abandoned: MachineState | undefined;
  saveMachineState(state: MachineState): Promise<void>;
  release(): Promise<void>;
}

function serialize(state: MachineState): string {
  return JSON.stringify({ ...state, sysctls: [...state.sysctls], paths: [...state.paths] });
}

function deserialize(text: string): MachineState {
  const raw = JSON.parse(text) as Omit<MachineState, 'sysctls' | 'paths'> & {
    sysctls: [string, string][];
    paths: [string, string[] | null][];
  };
  return { ...raw, sysctls: new Map(raw.sysctls), paths: new Map(raw.paths) };
}

export async function acquireNodeLock(timeoutMs: number, log: (line: string) => void): Promise<NodeLock> {
  const deadline = Date.now() + timeoutMs;
  let waitingSaid = false;
  for (;;) {
    try {
      await mkdir(lockDir, { recursive: false });
      await writeFile(ownerFile, String(process.pid));
      return { abandoned: undefined, saveMachineState, release };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(await readFile(ownerFile, 'utf8').catch(() => 'NaN'));
    if (Number.isInteger(owner) && !alive(owner)) {
      // Its holder died: take the lock over, with what it left to restore.
      const abandoned = await readFile(stateFile, 'utf8').then(deserialize, () => undefined);
      await writeFile(ownerFile, String(process.pid));
      return { abandoned, saveMachineState, release };
    }
    if (Date.now() > deadline)
      throw new Error(`another node (process ${owner}) still runs on this machine after ${timeoutMs} ms`);
    if (!waitingSaid) log(`waiting for the node of process ${owner} to stop (one node per machine)`);
    waitingSaid = true;
    await sleep(500);
  }
}

async function saveMachineState(state: MachineState): Promise<void> {
  await writeFile(stateFile, serialize(state));
}

async function release(): Promise<void> {
  await rm(lockDir, { recursive: true, force: true });
}
