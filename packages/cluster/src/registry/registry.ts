/**
 * A real OCI registry on this machine: CNCF distribution (the `registry` program Docker Hub and GHCR's
 * API follow), built from its Go module with the release tools, storing blobs on disk. It stands where a
 * user's registry (ghcr.io) stands: the release pushes images and charts to it, helm installs charts from
 * it and the node's containerd pulls images from it.
 *
 * It listens on loopback only and speaks plain HTTP: nothing off the machine can reach it, and its
 * clients are told so explicitly (`crane --insecure`, `helm --plain-http`, containerd's hosts.toml), as
 * they would be for any registry without TLS.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freeLoopbackPort, ManagedProcess } from '@loopwright/envtest';
import { ensureReleaseTools } from '../tools/release-tools.ts';

export interface LocalRegistry {
  /** `127.0.0.1:<port>`: the host part of every reference into it, e.g. `127.0.0.1:41234/loopwright/at-scheduler:0.1.0`. */
  host: string;
  stop(): Promise<void>;
}

export interface LocalRegistryOptions {
  /** Holds the configuration, the log and the stored blobs (kept across restarts on the same port). */
  dir: string;
  /** Default: a free loopback port. */
  port?: number;
  log?: (line: string) => void;
  startTimeoutMs?: number;
}

/** distribution's configuration (version 0.1 is the format's only version). */
function registryConfig(rootDirectory: string, address: string): string {
  return `version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: ${rootDirectory}
  # Lets a test (or a user re-running a release) replace a tag's manifest and delete what it pushed.
  delete:
    enabled: true
http:
  addr: ${address}
`;
}

export async function startLocalRegistry(options: LocalRegistryOptions): Promise<LocalRegistry> {
  const tools = await ensureReleaseTools({ log: options.log });
  await mkdir(join(options.dir, 'data'), { recursive: true });
  const host = `127.0.0.1:${options.port ?? (await freeLoopbackPort())}`;
  const configPath = join(options.dir, 'config.yml');
  await writeFile(configPath, registryConfig(join(options.dir, 'data'), host));
  const registry = new ManagedProcess(
    'registry',
    tools.registry,
    ['serve', configPath],
    join(options.dir, 'registry.log'),
  );
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  // GET /v2/ answers 200 once the registry serves the distribution API.
  for (;;) {
    if (registry.exited) throw new Error(`the registry exited during start-up:\n${await registry.tail()}`);
    const status = await fetch(`http://${host}/v2/`).then(
      (response) => response.status,
      () => undefined,
    );
    if (status === 200) break;
    if (Date.now() > deadline) {
      await registry.stop();
      throw new Error(`the registry did not answer on ${host} in time:\n${await registry.tail()}`);
    }
    await sleep(100);
  }
  options.log?.(`registry serving on ${host} (${options.dir})`);
  return { host, stop: () => registry.stop() };
}
