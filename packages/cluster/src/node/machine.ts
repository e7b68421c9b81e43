/**
 * What a node changes on the machine, read before it starts and put back when it stops: sysctls,
 * nftables rules (iptables here is iptables-nft), network links and namespaces, mounts, and the files
 * and directories that containerd, the CNI plugins and the kubelet create outside the node's own
 * directory. The node's cgroups are its own (cgroups.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { changedSysctls, readSysctls, restoreSysctls } from './sysctls.ts';

const run = promisify(execFile);

/**
 * Paths outside the node's directory that its components create whatever they are configured with:
 * network-namespace mounts and runtime sockets, libcni's result cache, the kubelet's container-log
 * symlinks, the iptables lock.
 */
const watchedPaths = [
  '/run/netns',
  '/run/containerd',
  '/run/runc',
  '/run/xtables.lock',
  '/var/lib/cni',
  '/var/lib/containerd',
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/log/pods',
  '/etc/cni',
  '/opt/cni',
  '/etc/kubernetes',
];

export interface MachineState {
  sysctls: Map<string, string>;
  /** `nft list ruleset`, exactly. */
  nftables: string;
  links: string[];
  mounts: string[];
  /** For each watched path: its entries (a directory), [] (a file), or null (absent). */
  paths: Map<string, string[] | null>;
}

async function nftRuleset(): Promise<string> {
  return (await run('nft', ['list', 'ruleset'])).stdout;
}

async function linkNames(): Promise<string[]> {
  const { stdout } = await run('ip', ['-o', 'link', 'show']);
  return stdout
    .split('\n')
    .map((line) => /^\d+: ([^:@]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
}

/** Mount points, decoded from /proc/self/mountinfo (octal escapes for spaces and the like). */
async function mountPoints(): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) =>
      (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, octal: string) =>
        String.fromCharCode(parseInt(octal, 8)),
      ),
    );
}

async function pathEntries(path: string): Promise<string[] | null> {
  if (!existsSync(path)) return null;
  return readdir(path)
    .then((entries) => entries.sort())
    .catch(() => []);
}

export async function readMachineState(): Promise<MachineState> {
  const paths = new Map<string, string[] | null>();
  for (const path of watchedPaths) paths.set(path, await pathEntries(path));
  return {
    sysctls: await readSysctls(),
    nftables: await nftRuleset(),
    links: await linkNames(),
    mounts: await mountPoints(),
    paths,
  };
}

/** Every way `after` differs from `before`, one line each; empty when the machine is as it was. */
export function machineDifferences(before: MachineState, after: MachineState): string[] {
  const added = (a: string[], b: string[]) => b.filter((x) => !a.includes(x));
  const differences = [
    ...changedSysctls(before.sysctls, after.sysctls).map(
      (key) => `sysctl ${key}: ${before.sysctls.get(key)} -> ${after.sysctls.get(key)}`,
    ),
    ...(before.nftables === after.nftables ? [] : ['nftables ruleset differs']),
    ...added(before.links, after.links).map((link) => `link ${link} added`),
    ...added(after.links, before.links).map((link) => `link ${link} removed`),
    ...added(before.mounts, after.mounts).map((mount) => `mount ${mount} added`),
    ...added(after.mounts, before.mounts).map((mount) => `mount ${mount} removed`),
  ];
  for (const [path, entries] of before.paths) {
    const now = after.paths.get(path) ?? null;
    if (entries === null && now !== null) differences.push(`${path} created`);
    else if (entries !== null && now === null) differences.push(`${path} removed`);
    else if (entries && now) differences.push(...added(entries, now).map((e) => `${join(path, e)} created`));
  }
  return differences;
}

/** Unmounts everything mounted at or below `dir`, deepest first. */
export async function unmountUnder(dir: string): Promise<void> {
  const below = (await mountPoints()).filter((point) => point === dir || point.startsWith(`${dir}/`));
  for (const point of below.sort((a, b) => b.length - a.length)) await unmount(point);
}

async function unmount(mountPoint: string): Promise<void> {
  // Lazy: a mount still referenced (a dying process's cwd) is detached now and freed when released.
  await run('umount', ['--lazy', mountPoint]).catch(() => undefined);
}

/**
 * Puts the machine back as `saved` found it: unmounts what was mounted since (deepest first), deletes
 * links and watched paths created since, restores the nftables ruleset and the sysctls. Call it once
 * every process of the node is gone; `scratchDir` must still exist. Returns what it did, one line each.
 */
export async function restoreMachineState(saved: MachineState, scratchDir: string): Promise<string[]> {
  const done: string[] = [];
  const mounted = (await mountPoints()).filter((mount) => !saved.mounts.includes(mount));
  for (const mount of mounted.sort((a, b) => b.length - a.length)) {
    await unmount(mount);
    done.push(`unmounted ${mount}`);
  }
  for (const link of await linkNames()) {
    if (saved.links.includes(link)) continue;
    // A veth goes with its pod's namespace; one whose peer already went is gone by now.
    await run('ip', ['link', 'delete', link]).catch(() => undefined);
    done.push(`deleted link ${link}`);
  }
  for (const [path, entries] of saved.paths) {
    const now = await pathEntries(path);
    if (now === null) continue;
    const created =
      entries === null ? [path] : now.filter((e) => !entries.includes(e)).map((e) => join(path, e));
    for (const target of created) {
      await rm(target, { recursive: true, force: true });
      done.push(`removed ${target}`);
    }
  }
  if ((await nftRuleset()) !== saved.nftables) {
    // The whole ruleset, atomically: `nft -f` applies the flush and the saved rules in one transaction.
    const rules = join(scratchDir, 'nftables-restore.nft');
    await writeFile(rules, `flush ruleset\n${saved.nftables}`);
    await run('nft', ['-f', rules]);
    done.push('restored the nftables ruleset');
  }
  done.push(...(await restoreSysctls(saved.sysctls)).map((line) => `restored sysctl ${line}`));
  return done;
}
