import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const procSys = '/proc/sys';

/** Sysctls that change on their own (or are write-only triggers): never compared, never written. */
const volatile = [
  /^kernel\/ns_last_pid$/,
  /^kernel\/random\//,
  /^vm\/(drop_caches|compact_memory|stat_refresh)$/,
  /^net\/ipv[46]\/route\/flush$/,
  /^fs\/(dentry-state|inode-nr|inode-state|file-nr)$/,
];

/** Per-interface settings belong to the interface and go with it; only `all` and `default` are machine-wide. */
function isMachineWide(key: string): boolean {
  const perInterface = /^net\/ipv[46]\/(conf|neigh)\/([^/]+)\//.exec(key);
  return !perInterface || perInterface[2] === 'all' || perInterface[2] === 'default';
}

async function writableFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  const files = entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  // Statistics (fs.quota.*, fs.file-nr...) are read-only: state nobody can change, or restore.
  const writable = await Promise.all(
    files.map(async (file) => ((await stat(file).catch(() => undefined))?.mode ?? 0) & 0o200),
  );
  return files.filter((_, i) => writable[i]).map((file) => relative(procSys, file));
}

/**
 * Reads every machine-wide, writable sysctl under kernel/, vm/, fs/ and net/: what a kubelet, kube-proxy
 * or a CNI plugin may change (kernel.panic, vm.overcommit_memory, conntrack limits, ip_forward...).
 */
export async function readSysctls(): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  const keys = (await Promise.all(['kernel', 'vm', 'fs', 'net'].map((d) => writableFiles(join(procSys, d)))))
    .flat()
    .filter((key) => isMachineWide(key) && !volatile.some((pattern) => pattern.test(key)));
  await Promise.all(
    keys.map(async (key) => {
      // Write-only and permission-less entries throw: they hold no state to restore.
      const value = await readFile(join(procSys, key), 'utf8').catch(() => undefined);
      if (value !== undefined) values.set(key, value.trim());
    }),
  );
  return values;
}

/** The keys whose value differs between two readings (keys present in both). */
export function changedSysctls(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...before]
    .filter(([key, value]) => after.has(key) && after.get(key) !== value)
    .map(([key]) => key)
    .sort();
}

/** Writes back every sysctl that differs from `saved`; returns what it restored, as `key: now -> saved`. */
export async function restoreSysctls(saved: Map<string, string>): Promise<string[]> {
  const now = await readSysctls();
  const restored: string[] = [];
  for (const key of changedSysctls(saved, now)) {
    const value = saved.get(key) ?? '';
    await writeFile(join(procSys, key), value);
    restored.push(`${key.replaceAll('/', '.')}: ${now.get(key)} -> ${value}`);
  }
  return restored;
}
