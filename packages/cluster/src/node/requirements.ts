import { existsSync } from 'node:fs';

/** Why a node cannot start on this machine; callers may fall back to the API-server-only control plane. */
export class NodeUnavailableError extends Error {
  override name = 'NodeUnavailableError';
}

/** What the node runs or calls, from Debian's packages (scripts/setup.sh installs them). */
const requiredFiles: Record<string, string> = {
  containerd: '/usr/bin/containerd',
  ctr: '/usr/bin/ctr',
  runc: '/usr/sbin/runc',
  'CNI bridge plugin': '/usr/lib/cni/bridge',
  'CNI host-local plugin': '/usr/lib/cni/host-local',
  'CNI loopback plugin': '/usr/lib/cni/loopback',
  nft: '/usr/sbin/nft',
  conntrack: '/usr/sbin/conntrack',
  ip: '/usr/sbin/ip',
  setpriv: '/usr/bin/setpriv',
  openssl: '/usr/bin/openssl',
};

/** Throws NodeUnavailableError naming the first thing that stops a node from starting here. */
export function assertNodeCanStart(): void {
  if (process.platform !== 'linux')
    throw new NodeUnavailableError(`a node needs Linux, not ${process.platform}`);
  if (process.getuid?.() !== 0)
    throw new NodeUnavailableError('a node needs root (containers, cgroups, a bridge)');
  const missing = Object.entries(requiredFiles).filter(([, path]) => !existsSync(path));
  if (missing.length > 0)
    throw new NodeUnavailableError(
      `missing ${missing.map(([name, path]) => `${name} (${path})`).join(', ')}: run ./scripts/setup.sh`,
    );
}
