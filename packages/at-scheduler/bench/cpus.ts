/**
 * Which CPUs the bench's processes run on (`AT_BENCH_CPUS`):
 *
 * - `split`: the control plane (etcd, kube-apiserver, kube-controller-manager) on the first half of the
 *   machine's CPUs, and this process with everything else it starts (the controller's process and the
 *   limit programs) on the other half. That is the layout of a cluster, where the API server has
 *   control-plane nodes of its own: a contender's CPU then takes nothing from the API server, so the ratio
 *   compares what each contender gets out of the same API server rather than how much CPU each leaves it.
 * - `shared`: every process may run on every CPU; on a small machine the API server and the contender
 *   compete for the same cores, and a contender that spends more CPU per start also slows the server.
 *
 * The default is `split` on a machine with two CPUs or more. Placement is set with util-linux's `taskset`
 * (essential in Debian). The control plane's processes are born on their CPUs: this process's main
 * thread, which forks them, moves to the control plane's half while it starts one, and every thread of
 * this process moves back afterwards.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface CpuPlacement {
  /** One line for the bench's header. */
  describe(): string;
  /** Runs `start` (which spawns the control plane) with its children born on the control plane's CPUs. */
  forControlPlane<T>(start: () => Promise<T>): Promise<T>;
}

/** The placement `AT_BENCH_CPUS` asks for (`split` by default where there are two CPUs or more). */
export function cpuPlacement(env: NodeJS.ProcessEnv = process.env): CpuPlacement {
  const cpus = availableParallelism();
  const asked = env.AT_BENCH_CPUS ?? (cpus >= 2 ? 'split' : 'shared');
  if (asked === 'shared') return sharedPlacement(cpus);
  if (asked !== 'split')
    throw new Error(`AT_BENCH_CPUS must be split or shared, not ${JSON.stringify(asked)}`);
  if (cpus < 2) throw new Error(`AT_BENCH_CPUS=split needs two CPUs or more; this machine has ${cpus}`);
  return splitPlacement(cpus);
}

function sharedPlacement(cpus: number): CpuPlacement {
  return {
    describe: () => `CPUs: all ${cpus} shared by the control plane and the contenders`,
    forControlPlane: (start) => start(),
  };
}

function splitPlacement(cpus: number): CpuPlacement {
  const half = Math.ceil(cpus / 2);
  const plane = range(0, half);
  const contenders = range(half, cpus);
  // Everything this process is or starts runs on the contenders' half from now on.
  pin(contenders, { allThreads: true });
  return {
    describe: () =>
      `CPUs: control plane on ${plane}, this process, the controller and the limit programs on ${contenders}`,
    async forControlPlane(start) {
      pin(plane, { allThreads: false });
      try {
        return await start();
      } finally {
        pin(contenders, { allThreads: true });
      }
    },
  };
}

/** "a-b" (or "a") for CPUs `from` to `to` - 1. */
function range(from: number, to: number): string {
  return to - from === 1 ? String(from) : `${from}-${to - 1}`;
}

/** Sets this process's CPUs: of its main thread only, or of all its threads. */
function pin(cpuList: string, { allThreads }: { allThreads: boolean }): void {
  const args = [...(allThreads ? ['-a'] : []), '-p', '-c', cpuList, String(process.pid)];
  try {
    execFileSync('taskset', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const reason = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    throw new Error(
      `AT_BENCH_CPUS=split: taskset ${args.join(' ')} failed (${reason}); AT_BENCH_CPUS=shared runs without it`,
      { cause: error },
    );
  }
}
