/**
 * Stand-in for `gcr.io/distroless/nodejs24-debian12:nonroot`, made from this machine: the workspace's
 * Node 24 binary at /nodejs/bin/node, the host's glibc libraries it links (distroless carries Debian 12's
 * glibc; the host is Debian 12 too), distroless's users and groups, and its image config.
 */
import { existsSync } from 'node:fs';
import { writeLayer } from './layer.ts';
import { provisionedNodeBinary, sharedLibraries } from './node-binary.ts';
import { epoch, type Image } from './oci-image.ts';
import { directory, hostFile, hostFileWithLinks, textFile, withParents } from './rootfs-entries.ts';
import type { TarEntry } from './tar.ts';

export const distrolessNodejsImage = 'gcr.io/distroless/nodejs24-debian12:nonroot';

const nonroot = { uid: 65532, gid: 65532 };
const caBundle = '/etc/ssl/certs/ca-certificates.crt';

// As distroless's base-nossl/base images define them.
const passwd = `root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
`;
const group = `root:x:0:
nobody:x:65534:
tty:x:5:
staff:x:50:
nonroot:x:65532:
`;

export async function distrolessNodejsStandIn(blobsDir: string): Promise<Image> {
  const node = await provisionedNodeBinary();
  const libraries = await Promise.all((await sharedLibraries(node)).map((path) => hostFileWithLinks(path)));
  const entries: TarEntry[] = [
    directory('etc'),
    textFile('etc/passwd', passwd),
    textFile('etc/group', group),
    directory('home'),
    directory('home/nonroot', 0o700, nonroot),
    directory('root', 0o700),
    directory('tmp', 0o1777),
    await hostFile(node, 'nodejs/bin/node'),
    ...libraries.flat(),
    ...(existsSync(caBundle) ? [await hostFile(caBundle, caBundle.slice(1))] : []),
  ];
  const layer = await writeLayer(withParents(entries), blobsDir);
  return {
    name: distrolessNodejsImage,
    config: {
      User: '65532',
      Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', `SSL_CERT_FILE=${caBundle}`],
      Entrypoint: ['/nodejs/bin/node'],
      WorkingDir: '/home/nonroot',
    },
    layers: [layer],
    history: [
      {
        created: epoch,
        created_by: `loopwright stand-in for ${distrolessNodejsImage}: Node ${node}, host glibc, distroless users`,
      },
    ],
  };
}
