/**
 * AT_BENCH_APISERVER_PROFILE=<dir>: a Go CPU profile of kube-apiserver (its /debug/pprof/profile) for
 * APISERVER_PROFILE_SECONDS from two seconds after the window opens, one file per phase, so the two
 * contenders' API server work can be compared under the same burst (`go tool pprof -top <file>`).
 * The first seconds are left out: both contenders are then past their first requests and at their pace.
 */
import type { KubeClient } from '@loopwright/runtime';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const APISERVER_PROFILE_SECONDS = 10;
const AFTER_OPEN_MS = 2000;

/**
 * Resolves once the profile is written (or at once without a directory). Never rejects: a profile is a
 * diagnostic, so a failure to take one is reported on stderr and the run goes on.
 */
export async function profileApiServer(
  admin: KubeClient,
  dir: string | undefined,
  label: string,
  windowOpenMs: number,
): Promise<void> {
  if (!dir) return;
  try {
    await sleep(Math.max(0, windowOpenMs + AFTER_OPEN_MS - Date.now()));
    const response = await admin.fetch(`/debug/pprof/profile?seconds=${APISERVER_PROFILE_SECONDS}`);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${label}.pprof`), Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    process.stderr.write(`kube-apiserver profile ${label} not taken: ${String(error)}\n`);
  }
}
