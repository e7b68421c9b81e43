/**
 * Stand-in for `busybox:1.37.0`, the at-scheduler's default At image: Debian's static busybox (1.35, the
 * only one on this machine) with every applet linked in /bin, and root and nobody as users.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { normalizedImageName } from './image-name.ts';
import { writeLayer } from './layer.ts';
import { epoch, type Image } from './oci-image.ts';
import { directory, hostFile, textFile } from './rootfs-entries.ts';
import type { TarEntry } from './tar.ts';

const run = promisify(execFile);

/** The reference the chart uses (`defaultImage`), and the name containerd must hold it under. */
export const busyboxReference = 'busybox:1.37.0';
export const busyboxImage = normalizedImageName(busyboxReference);

const hostBusybox = '/bin/busybox';

export async function busyboxStandIn(blobsDir: string): Promise<Image> {
  const { stdout } = await run(hostBusybox, ['--list']);
  const applets = stdout
    .split('\n')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name !== 'busybox');
  const root = { uid: 0, gid: 0 };
  const entries: TarEntry[] = [
    directory('bin'),
    await hostFile(hostBusybox, 'bin/busybox'),
    ...applets.map((name): TarEntry => ({
      type: 'symlink',
      path: `bin/${name}`,
      target: 'busybox',
      ...root,
    })),
    directory('etc'),
    textFile('etc/passwd', 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n'),
    textFile('etc/group', 'root:x:0:\nnobody:x:65534:\n'),
    directory('home'),
    directory('root', 0o700),
    directory('tmp', 0o1777),
  ];
  const layer = await writeLayer(entries, blobsDir);
  return {
    name: busyboxImage,
    config: { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], Cmd: ['sh'] },
    layers: [layer],
    history: [
      { created: epoch, created_by: `loopwright stand-in for ${busyboxReference}: Debian's busybox-static` },
    ],
  };
}
