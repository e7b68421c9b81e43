/**
 * A throwaway containerd for the image tests: its root, state and socket in a temporary directory, the
 * CRI plugin off (these tests run containers with ctr, not a kubelet). `stop()` leaves nothing behind:
 * no containerd or shim process, no mount under the directory, no directory.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PrivateContainerd {
  address: string;
  /** Runs `ctr` against this containerd in the `k8s.io` namespace. */
  ctr(args: readonly string[], timeoutMs?: number): Promise<{ stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

/** Whether this machine can run the containerd tests: root, with containerd, ctr and runc on PATH. */
export async function containerdUnavailableReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (containerd and runc mount and create cgroups)';
  for (const tool of ['containerd', 'ctr', 'runc', 'containerd-shim-runc-v2']) {
    const found = await run('sh', ['-c', `command -v ${tool}`]).then(
      () => true,
      () => false,
    );
    if (!found) return `${tool} is not installed (Debian packages containerd and runc)`;
  }
  return undefined;
}

/** Mount points at or below `dir`, deepest first, so that each can be unmounted in turn. */
async function mountsUnder(dir: string): Promise<string[]> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  return mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4]?.replace(/\\040/g, ' '))
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

/** Shims started for this containerd: they outlive it when a task is still running. */
async function shimsOf(address: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const args = cmdline.split('\0');
    if (args[0]?.endsWith('containerd-shim-runc-v2') && args.includes(address)) pids.push(Number(entry));
  }
  return pids;
}

export async function startPrivateContainerd(): Promise<PrivateContainerd> {
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-containerd-'));
  const address = join(dir, 'containerd.sock');
  const config = join(dir, 'config.toml');
  await writeFile(
    config,
    [
      'version = 2',
      `root = "${join(dir, 'root')}"`,
      `state = "${join(dir, 'state')}"`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      '[grpc]',
      `  address = "${address}"`,
      '[ttrpc]',
      `  address = "${join(dir, 'containerd.sock.ttrpc')}"`,
      '',
    ].join('\n'),
  );
  const daemon = spawn('containerd', ['--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  daemon.stderr.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) =>
    daemon.once('exit', () => {
      resolve();
    }),
  );
  const running = () => daemon.exitCode === null && daemon.signalCode === null;

  const ctr = (args: readonly string[], timeoutMs = 60_000) =>
    run('ctr', ['--address', address, '--namespace', 'k8s.io', ...args], {
      timeout: timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
    });

  const stop = async () => {
    if (running()) {
      const tasks = await ctr(['tasks', 'list', '--quiet']).catch(() => ({ stdout: '' }));
      for (const id of tasks.stdout.split('\n').filter(Boolean)) {
        await ctr(['tasks', 'kill', '--signal', 'SIGKILL', id]).catch(() => undefined);
        await ctr(['tasks', 'delete', '--force', id]).catch(() => undefined);
      }
      daemon.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (running()) daemon.kill('SIGKILL');
      await exited;
    }
    for (const pid of await shimsOf(address)) process.kill(pid, 'SIGKILL');
    for (const point of await mountsUnder(dir)) await run('umount', ['--lazy', point]);
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (!running()) {
      await stop();
      throw new Error(`containerd exited during start-up:\n${log}`);
    }
    if (
      existsSync(address) &&
      (await ctr(['version']).then(
        () => true,
        () => false,
      ))
    )
      break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`containerd not up after 20 s:\n${log}`);
    }
    await sleep(100);
  }
  return { address, ctr, stop };
}
