/**
 * Fault hooks of the node, for the fault suite (e2e/chaos): a pod's traffic to the API server dropped
 * without a reset, or its connections reset, and a container's memory limit lowered under it. Each undoes itself when asked, and
 * the node's stop undoes whatever is left: the rules live in the node's nftables table, which goes with
 * the machine's ruleset restore, and a container's cgroup goes with the node's cgroup root.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NODE_NFT_TABLE } from './network.ts';

const run = promisify(execFile);

/** The chains of the node's table that hold black holes: one on the host's input, one on its output. */
const chains = { in: 'black-hole-in', out: 'black-hole-out' } as const;

async function nft(...args: string[]): Promise<string> {
  return (await run('nft', args)).stdout;
}

/** Adds a rule, returning its handle (`nft --echo --handle` prints `# handle <n>`). */
async function addRule(chain: string, rule: string[]): Promise<string> {
  const echoed = await nft('--echo', '--handle', 'add', 'rule', 'inet', NODE_NFT_TABLE, chain, ...rule);
  const handle = /# handle (\d+)/.exec(echoed)?.[1];
  if (!handle) throw new Error(`nft printed no handle for the rule in ${chain}: ${echoed}`);
  return handle;
}

/**
 * Drops every packet between `podIp` and the API server's port (both ways; the Service address's port
 * 443 too, as the reply may be rewritten before the output hook), silently: no reset, no ICMP, so the
 * pod's open connections hang as over a dead link. The pod's other traffic (the kubelet's probes, a
 * scrape) flows. Resolves to the restore, which deletes exactly these rules.
 */
export async function blackHoleApiServer(podIp: string, apiServerPort: number): Promise<() => Promise<void>> {
  for (const [chain, hook] of [
    [chains.in, 'input'],
    [chains.out, 'output'],
  ] as const)
    // `add chain` leaves an existing chain as it is.
    await nft(
      'add',
      'chain',
      'inet',
      NODE_NFT_TABLE,
      chain,
      `{ type filter hook ${hook} priority 0; policy accept; }`,
    );
  const ports = `{ ${apiServerPort}, 443 }`;
  const handles = [
    [chains.in, await addRule(chains.in, ['ip', 'saddr', podIp, 'tcp', 'dport', ports, 'drop'])],
    [chains.out, await addRule(chains.out, ['ip', 'daddr', podIp, 'tcp', 'sport', ports, 'drop'])],
  ] as const;
  return async () => {
    for (const [chain, handle] of handles)
      await nft('delete', 'rule', 'inet', NODE_NFT_TABLE, chain, 'handle', handle);
  };
}

/**
 * Destroys the API server's sockets to `podIp` (`ss -K`, the kernel's SOCK_DESTROY: the pod's side gets
 * a reset); returns how many there were.
 */
export async function resetApiServerConnections(
  podIp: string,
  hostAddress: string,
  apiServerPort: number,
): Promise<number> {
  const filter = ['src', hostAddress, 'sport', '=', `:${apiServerPort}`, 'dst', podIp];
  const { stdout } = await run('ss', ['--kill', '--tcp', '--numeric', '--no-header', ...filter]);
  return stdout.split('\n').filter(Boolean).length;
}

/** The directory of a container's cgroup in the v1 memory hierarchy, below the node's cgroup root. */
async function memoryCgroupOf(cgroupRoot: string, containerId: string): Promise<string> {
  const search = async (dir: string): Promise<string | undefined> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.filter((e) => e.isDirectory())) {
      const path = join(dir, entry.name);
      if (entry.name === containerId) return path;
      const found = await search(path);
      if (found) return found;
    }
    return undefined;
  };
  const found = await search(join('/sys/fs/cgroup/memory', cgroupRoot));
  if (!found) throw new Error(`no memory cgroup for container ${containerId} below /${cgroupRoot}`);
  return found;
}

/**
 * Lowers a running container's memory limit to what it uses now plus `headroomBytes`, in its cgroup
 * (cgroup v1: a limit below the usage is refused with EBUSY when the kernel cannot reclaim enough), so
 * that its next growth is met by the kernel's OOM killer, as a container outgrowing its limit is. The
 * pod's spec is unchanged: the container the kubelet starts next gets the spec's limit back. Returns
 * the limit set.
 */
export async function lowerMemoryLimit(
  cgroupRoot: string,
  containerId: string,
  headroomBytes: number,
): Promise<number> {
  const dir = await memoryCgroupOf(cgroupRoot, containerId);
  const usage = Number(await readFile(join(dir, 'memory.usage_in_bytes'), 'utf8'));
  const limit = usage + headroomBytes;
  await writeFile(join(dir, 'memory.limit_in_bytes'), String(limit));
  return limit;
}
