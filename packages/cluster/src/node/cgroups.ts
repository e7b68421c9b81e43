/**
 * The node's own cgroup subtree (the kubelet's `cgroupRoot`), created in every hierarchy before the
 * kubelet starts and removed, with every process left in it, when the node stops. Everything a pod runs
 * lives below it, so killing the subtree is how no container process outlives the node.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Where each cgroup hierarchy is mounted (v1 controllers and, if present, the v2 unified tree). */
async function hierarchies(): Promise<string[]> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  return mountinfo
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => {
      const type = fields[fields.indexOf('-') + 1];
      return type === 'cgroup' || type === 'cgroup2';
    })
    .map((fields) => fields[4] ?? '')
    .filter(Boolean);
}

/** Creates `/<name>` in every hierarchy; cpuset needs its cpus and mems before a task may join. */
export async function createCgroupRoot(name: string): Promise<void> {
  for (const hierarchy of await hierarchies()) {
    const dir = join(hierarchy, name);
    await mkdir(dir, { recursive: true });
    for (const file of ['cpuset.cpus', 'cpuset.mems'])
      if (existsSync(join(hierarchy, file))) await copyFile(join(hierarchy, file), join(dir, file));
  }
}

/** Every directory of the subtree, deepest first. */
async function subtree(dir: string): Promise<string[]> {
  const children = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(
    children.filter((c) => c.isDirectory()).map((c) => subtree(join(dir, c.name))),
  );
  return [...nested.flat(), dir];
}

async function processesIn(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

/** The PIDs of every process in the subtree `/<name>`, in any hierarchy. */
export async function processesInCgroupRoot(name: string): Promise<number[]> {
  const pids = new Set<number>();
  for (const hierarchy of await hierarchies())
    for (const dir of await subtree(join(hierarchy, name)))
      for (const pid of await processesIn(dir)) pids.add(pid);
  return [...pids];
}

/** SIGKILLs every process in the subtree until none is left, then removes its directories. */
export async function removeCgroupRoot(name: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = await processesInCgroupRoot(name);
    if (pids.length === 0) break;
    if (Date.now() > deadline) throw new Error(`processes ${pids.join(', ')} survive in cgroup /${name}`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await sleep(100);
  }
  for (const hierarchy of await hierarchies()) {
    const root = join(hierarchy, name);
    if (!existsSync(root)) continue;
    for (const dir of await subtree(root)) {
      // A cgroup whose last process just exited can be busy for a moment.
      for (let attempt = 0; ; attempt++) {
        try {
          await rmdir(dir);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
          if (attempt >= 50) throw error;
          await sleep(100);
        }
      }
    }
  }
}
