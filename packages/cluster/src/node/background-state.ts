/**
 * The state file of the control plane or cluster that `pnpm controlplane up` / `pnpm cluster up` runs in
 * the background: `.controlplane/state.json` or `.cluster/state.json` at the repository root. Written by
 * the CLI when it is up; read by the CLI (`env`, `down`) and by tools that use the running node
 * (`pnpm release --local` finds its registry here). A state whose supervisor is gone is stale: its
 * processes died with it.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestNode } from './test-node.ts';

export interface BackgroundState {
  /** The supervisor's process. */
  pid: number;
  server: string;
  kubeconfigPath: string;
  /** Set for a cluster (`--node`): its node, with the registry beside it. */
  node?: TestNode;
}

export function backgroundStatePath(repoRoot: string, withNode: boolean): string {
  return join(repoRoot, withNode ? '.cluster' : '.controlplane', 'state.json');
}

/** The state at `path` while its supervisor runs; undefined when there is none, or it is stale. */
export async function readBackgroundState(path: string): Promise<BackgroundState | undefined> {
  if (!existsSync(path)) return undefined;
  const state = JSON.parse(await readFile(path, 'utf8')) as BackgroundState;
  try {
    process.kill(state.pid, 0);
    return state;
  } catch {
    return undefined;
  }
}

export async function writeBackgroundState(path: string, state: BackgroundState): Promise<void> {
  await writeFile(path, JSON.stringify(state));
}
