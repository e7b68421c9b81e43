/**
 * A private containerd: its own root, state and socket (and, for the node, CRI and CNI configuration),
 * so it neither meets nor changes a containerd the machine may already run. The image tests run one
 * without CRI, through ctr alone.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ManagedProcess } from '@loopwright/envtest';

const run = promisify(execFile);

/** The namespace the CRI plugin keeps Kubernetes' images and containers in. */
const criNamespace = 'k8s.io';

/** The CRI plugin's settings, for a containerd that a kubelet uses. */
export interface CriSettings {
  /** The pod sandbox image; it must be imported before the first pod starts. */
  sandboxImage: string;
  cniConfDir: string;
  /**
   * containerd's per-registry configuration directory (`<host>/hosts.toml`, see {@link writeRegistryHosts}):
   * how the CRI plugin reaches registries that differ from the defaults (HTTPS on 443).
   */
  registryConfigDir: string;
}

export interface ContainerdOptions {
  dir: string;
  socket: string;
  /** Without it the CRI plugin is off (containers only through ctr). */
  cri?: CriSettings;
}

/** The socket's file name: how this project's shims are told from any other containerd's. */
export const containerdSocketName = 'loopwright-containerd.sock';

function criConfig(cri: CriSettings): string {
  return `
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${cri.sandboxImage}"
  # root here lacks CAP_SYS_RESOURCE: a sandbox asking for oom_score_adj -998 fails to start
  # ("can't get final child's PID from pipe"); this clamps it to what the process may set.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cri.cniConfDir}"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${cri.registryConfigDir}"
`;
}

function config(options: ContainerdOptions): string {
  const disabled = [
    // No snapshotter that probes the machine's block devices or filesystems, no tracing.
    'io.containerd.snapshotter.v1.aufs',
    'io.containerd.snapshotter.v1.btrfs',
    'io.containerd.snapshotter.v1.devmapper',
    'io.containerd.snapshotter.v1.zfs',
    'io.containerd.tracing.processor.v1.otlp',
    'io.containerd.internal.v1.tracing',
    ...(options.cri ? [] : ['io.containerd.grpc.v1.cri']),
  ];
  return `version = 2
root = "${join(options.dir, 'root')}"
state = "${join(options.dir, 'state')}"
disabled_plugins = ${JSON.stringify(disabled)}

[grpc]
  address = "${options.socket}"

[ttrpc]
  address = "${options.socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "${join(options.dir, 'opt')}"
${options.cri ? criConfig(options.cri) : ''}`;
}

/**
 * Tells containerd that the registry at `host` (`127.0.0.1:<port>`) speaks plain HTTP: the hosts.toml a
 * user writes for a registry without TLS. Read at each pull, so a registry added after start-up counts.
 */
export async function writeRegistryHosts(registryConfigDir: string, host: string): Promise<void> {
  const dir = join(registryConfigDir, host);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'hosts.toml'),
    `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
}

/** `ctr` against this containerd, in the CRI namespace; its standard output. */
export async function ctr(socket: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('ctr', ['--address', socket, '--namespace', criNamespace, ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

export async function startContainerd(
  options: ContainerdOptions,
  timeoutMs: number,
): Promise<ManagedProcess> {
  await mkdir(options.cri?.cniConfDir ?? options.dir, { recursive: true });
  const configPath = join(options.dir, 'config.toml');
  await writeFile(configPath, config(options));
  // Debian's containerd does not know our exit-with-parent switch: setpriv asks the kernel for it.
  const containerd = new ManagedProcess(
    'containerd',
    'setpriv',
    ['--pdeathsig', 'TERM', '--', '/usr/bin/containerd', '--config', configPath, '--log-level', 'warn'],
    join(options.dir, 'containerd.log'),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (containerd.exited) throw new Error(`containerd exited during start-up:\n${await containerd.tail()}`);
    if (
      existsSync(options.socket) &&
      (await ctr(options.socket, 'version').then(
        () => true,
        () => false,
      ))
    )
      return containerd;
    if (Date.now() > deadline)
      throw new Error(`containerd not up after ${timeoutMs} ms:\n${await containerd.tail()}`);
    await sleep(100);
  }
}

/**
 * Kills containerd's shims for `socket` (they outlive containerd by design). A part of a socket path,
 * such as {@link containerdSocketName}, matches every shim of such containerds.
 */
export async function killShims(socket: string): Promise<void> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('containerd-shim') && cmdline.includes(socket)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}
