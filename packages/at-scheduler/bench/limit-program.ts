/**
 * The limit program (bench/limit, Go with client-go): built once per machine into the same cache as the
 * control-plane binaries, run as a child process per measurement. See limit/main.go for what it does.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureGoBuild } from '@loopwright/envtest';
import type { Pod } from '../src/index.ts';

const run = promisify(execFile);
const moduleDir = fileURLToPath(new URL('./limit/', import.meta.url));

export function ensureLimitProgram(log: (line: string) => void): Promise<string> {
  return ensureGoBuild(
    {
      what: 'the at-scheduler bench limit program',
      moduleDir,
      cacheName: 'at-scheduler-bench-limit',
      settings: '-trimpath',
      goBuildArgs: (outDir) => ['build', '-trimpath', '-o', join(outDir, 'limit'), '.'],
      binaries: ['limit'],
      entryName: (digest) => digest.slice(0, 16),
    },
    log,
  ).then((dir) => join(dir, 'limit'));
}

export interface LimitInput {
  kubeconfig: string;
  namespace: string;
  concurrency: number;
  /**
   * Cache the namespace's Ats, and its pods selected by `podSelector`, with client-go informers before
   * starting: the watches a controller of Ats needs, received and cached, with no decision made from them.
   */
  watch: boolean;
  podSelector: string;
  /**
   * `claim`: claimStatus()'s output for the At and `pod`: buildPod()'s, so the limit program writes the
   * controller's claim (its times set when sent) and creates the controller's pod.
   */
  ats: {
    name: string;
    resourceVersion: string;
    scheduleMs: number;
    claim: Record<string, unknown>;
    pod: Pod;
  }[];
}

/** One At as the limit program reports it; a time is 0 when its step was not reached. */
export interface LimitResult {
  name: string;
  dueMs: number;
  claimSentMs: number;
  claimAnsweredMs: number;
  createSentMs: number;
  createAnsweredMs: number;
  failedStep?: 'claim' | 'create';
  /** The HTTP status of the failed write, when it got one. */
  code?: number;
  error?: string;
}

export async function runLimitProgram(binary: string, input: LimitInput): Promise<LimitResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'at-bench-limit-'));
  try {
    const inputPath = join(dir, 'input.json');
    await writeFile(inputPath, JSON.stringify(input));
    const { stdout } = await run(binary, [inputPath], { maxBuffer: 1024 * 1024 * 1024 });
    return (JSON.parse(stdout) as { results: LimitResult[] }).results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
