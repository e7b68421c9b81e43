import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ImportOptions {
  /** containerd's gRPC socket. */
  address: string;
  /** Default `k8s.io`, the namespace the CRI plugin (and so the kubelet) sees. */
  namespace?: string;
}

/**
 * Imports an image archive from {@link writeImageArchive} into containerd and unpacks it for the default
 * snapshotter. The name comes from the archive's `io.containerd.image.name` annotation, verbatim.
 */
export async function importImage(
  archivePath: string,
  { address, namespace = 'k8s.io' }: ImportOptions,
): Promise<void> {
  await run(
    'ctr',
    ['--address', address, '--namespace', namespace, 'images', 'import', '--all-platforms', archivePath],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
}
