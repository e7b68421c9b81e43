/**
 * Every controller's image and the stand-in bases, built once for this file: their configs against
 * the root Dockerfile (read here with plain regexes, not with the parser under test), their app layers
 * against a fresh bundle, the OCI layout's digests, and, where containerd and runc are available, the
 * images imported and run.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { buildBaseImages } from './base-images.ts';
import { busyboxImage } from './busybox.ts';
import { importImage } from './containerd-import.ts';
import {
  buildControllerImage,
  bundleDirOf,
  controllerImageName,
  dockerfilePath,
  type ControllerImage,
} from './controller-image.ts';
import { workspaceControllers } from '../workspace/controllers.ts';
import { repositoryRoot } from '../workspace/repository-root.ts';
import type { ImageArchive } from './oci-image.ts';
import { containerdUnavailableReason, startPrivateContainerd } from './private-containerd.ts';

const run = promisify(execFile);
const controllers = workspaceControllers().map((controller) => controller.name);

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}
interface ImageConfigBlob {
  config: Record<string, unknown>;
  rootfs: { type: string; diff_ids: string[] };
  history: unknown[];
}

/** An archive unpacked by GNU tar, and read the way an OCI consumer does: index → manifest → blobs. */
async function openLayout(archive: ImageArchive, into: string) {
  await run('mkdir', ['-p', into]);
  await run('tar', ['-xf', archive.archivePath, '-C', into]);
  const blob = (digest: string) => readFile(join(into, 'blobs', ...digest.split(':')));
  const index = JSON.parse(await readFile(join(into, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
  const [manifestDescriptor] = index.manifests;
  assert.ok(manifestDescriptor);
  const manifest = JSON.parse((await blob(manifestDescriptor.digest)).toString()) as {
    mediaType: string;
    config: Descriptor;
    layers: Descriptor[];
  };
  const config = JSON.parse((await blob(manifest.config.digest)).toString()) as ImageConfigBlob;
  return { into, blob, index, manifestDescriptor, manifest, config };
}

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** `tar -tv` of a (gzip'ed or plain) tar: path → `mode uid/gid`, then a file's size or a link's target. */
async function layerListing(layerPath: string): Promise<Map<string, string>> {
  const { stdout } = await run('tar', ['-tvf', layerPath, '--numeric-owner'], {
    maxBuffer: 64 * 1024 * 1024,
    env: { TZ: 'UTC', LC_ALL: 'C' },
  });
  const listing = new Map<string, string>();
  for (const line of stdout.trim().split('\n')) {
    const match = /^(\S+)\s+(\S+)\s+(\d+)\s+\S+\s+\S+\s+(.*?)(?: -> (.*))?$/.exec(line);
    const [, mode = '', owner = '', size = '', path = '', target] = match ?? [];
    assert.ok(path, line);
    const detail = mode.startsWith('-') ? ` ${size}` : target === undefined ? '' : ` -> ${target}`;
    listing.set(path.replace(/\/$/, ''), `${mode} ${owner}${detail}`);
  }
  return listing;
}

/** The runtime stage's settings as the Dockerfile text states them, read with regexes. */
function expectedFromDockerfile(
  text: string,
  { appVersion, controller, description }: { appVersion: string; controller: string; description: string },
) {
  const runtime = text.slice(text.search(/^FROM (?![^\n]* AS )/m));
  const sourceDefault = /^ARG SOURCE=(\S+)$/m.exec(runtime)?.[1] ?? '';
  const labels = Object.fromEntries(
    [...runtime.matchAll(/(org\.opencontainers\.image\.[a-z]+)="([^"]*)"/g)].map(
      ([, key = '', value = '']) => [
        key,
        value
          .replace('${VERSION}', appVersion)
          .replace('${SOURCE}', sourceDefault)
          .replace('${CONTROLLER}', controller)
          .replace('${DESCRIPTION}', description),
      ],
    ),
  );
  return {
    base: /^FROM (\S+)$/m.exec(runtime)?.[1],
    User: /^USER (\S+)$/m.exec(runtime)?.[1],
    Entrypoint: JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(runtime)?.[1] ?? 'null') as unknown,
    WorkingDir: /^WORKDIR (\S+)$/m.exec(runtime)?.[1],
    Env: [...runtime.matchAll(/^ENV (\w+=\S+)$/gm)].map(([, pair]) => pair),
    ExposedPorts: Object.fromEntries(
      [...runtime.matchAll(/^EXPOSE (\d+)$/gm)].map(([, port = '']) => [`${port}/tcp`, {}]),
    ),
    Labels: labels,
  };
}

describe('controller images', { timeout: 15 * 60_000 }, () => {
  let outDir: string;
  let bases: ImageArchive[];
  const images = new Map<string, ControllerImage>();

  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'loopwright-images-test-'));
    bases = await buildBaseImages({ outDir });
    for (const controller of controllers)
      images.set(controller, await buildControllerImage(controller, { outDir }));
    for (const image of images.values()) {
      process.stderr.write(
        `# ${image.name}: ${image.sizeBytes} bytes compressed; app layer ${image.appLayerBytes.compressed} compressed, ${image.appLayerBytes.uncompressed} uncompressed\n`,
      );
    }
  });
  after(() => rm(outDir, { recursive: true, force: true }));

  for (const controller of controllers) {
    describe(controller, () => {
      it('is named as the chart runs it by default: image.repository and the appVersion tag', async () => {
        const chart = await readFile(join(repositoryRoot, 'charts', controller, 'Chart.yaml'), 'utf8');
        const values = await readFile(join(repositoryRoot, 'charts', controller, 'values.yaml'), 'utf8');
        const appVersion = /^appVersion: '?([^'\s]+)'?$/m.exec(chart)?.[1];
        const repository = /^ {2}repository: (\S+)$/m.exec(values)?.[1];
        assert.equal(images.get(controller)?.name, `${repository ?? ''}:${appVersion ?? ''}`);
        assert.equal(images.get(controller)?.name, `ghcr.io/loopwright/${controller}:${appVersion ?? ''}`);
      });

      it("has exactly the Dockerfile's User, Entrypoint, Env, WorkingDir, ExposedPorts and Labels", async () => {
        const image = images.get(controller);
        assert.ok(image);
        const manifest = JSON.parse(
          await readFile(join(repositoryRoot, 'packages', controller, 'package.json'), 'utf8'),
        ) as { description: string };
        const expected = expectedFromDockerfile(await readFile(dockerfilePath(), 'utf8'), {
          appVersion: image.appVersion,
          controller,
          description: manifest.description,
        });
        // Pinned by digest, the tag kept for Renovate; the stand-in is matched by the name:tag.
        assert.match(
          expected.base ?? '',
          /^gcr\.io\/distroless\/nodejs24-debian12:nonroot@sha256:[0-9a-f]{64}$/,
        );
        const { config } = await openLayout(image, join(outDir, 'layouts', controller));
        assert.deepEqual(config.config, {
          User: expected.User,
          Entrypoint: expected.Entrypoint,
          WorkingDir: expected.WorkingDir,
          // The base's variables, then the Dockerfile's.
          Env: [
            'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
            'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
            ...expected.Env,
          ],
          ExposedPorts: expected.ExposedPorts,
          Labels: expected.Labels,
        });
        assert.equal(config.config.User, '65532:65532');
        assert.equal(expected.Labels['org.opencontainers.image.version'], image.appVersion);
        // --build-arg CONTROLLER and DESCRIPTION reached the labels: the one Dockerfile names each image.
        assert.equal(config.config.Labels['org.opencontainers.image.title'], controller);
        assert.equal(config.config.Labels['org.opencontainers.image.description'], manifest.description);
        assert.notEqual(manifest.description, '');
      });

      it('is a valid OCI layout: every digest and size matches its blob, diff_ids match the uncompressed layers', async () => {
        const image = images.get(controller);
        assert.ok(image);
        const layout = await openLayout(image, join(outDir, 'layouts', `${controller}-check`));
        assert.deepEqual(JSON.parse(await readFile(join(layout.into, 'oci-layout'), 'utf8')), {
          imageLayoutVersion: '1.0.0',
        });
        assert.equal(layout.index.manifests.length, 1);
        assert.deepEqual(layout.manifestDescriptor.annotations, {
          'io.containerd.image.name': image.name,
          'org.opencontainers.image.ref.name': image.name,
        });
        const descriptors = [layout.manifestDescriptor, layout.manifest.config, ...layout.manifest.layers];
        for (const descriptor of descriptors) {
          const bytes = await layout.blob(descriptor.digest);
          assert.equal(sha256(bytes), descriptor.digest);
          assert.equal(bytes.length, descriptor.size);
        }
        assert.equal(layout.manifest.mediaType, 'application/vnd.oci.image.manifest.v1+json');
        assert.equal(layout.manifest.config.mediaType, 'application/vnd.oci.image.config.v1+json');
        const diffIds = await Promise.all(
          layout.manifest.layers.map(async (layer) => {
            assert.equal(layer.mediaType, 'application/vnd.oci.image.layer.v1.tar+gzip');
            return sha256(gunzipSync(await layout.blob(layer.digest)));
          }),
        );
        assert.deepEqual(layout.config.rootfs, { type: 'layers', diff_ids: diffIds });
        // Nothing in the layout that the index does not reach.
        const blobs = await readdir(join(layout.into, 'blobs', 'sha256'));
        assert.deepEqual(blobs.sort(), descriptors.map((d) => d.digest.slice('sha256:'.length)).sort());
        assert.equal(
          image.sizeBytes,
          layout.manifest.config.size + layout.manifest.layers.reduce((sum, l) => sum + l.size, 0),
        );
      });
    });
  }

  it('a release build is named <repository>:<version>, labelled with that version, and ships the same app layer', async () => {
    const chartBuilt = images.get('at-scheduler');
    assert.ok(chartBuilt);
    const repository = 'registry.example:5000/acme/at-scheduler';
    const image = await buildControllerImage('at-scheduler', { outDir, version: '9.8.7-rc.1', repository });
    assert.equal(image.name, `${repository}:9.8.7-rc.1`);
    assert.equal(image.appVersion, '9.8.7-rc.1');
    const layout = await openLayout(image, join(outDir, 'layouts', 'at-scheduler-release'));
    assert.equal(layout.manifestDescriptor.annotations?.['io.containerd.image.name'], image.name);
    const labels = layout.config.config['Labels'] as Record<string, string>;
    assert.equal(labels['org.opencontainers.image.version'], '9.8.7-rc.1');
    assert.equal(labels['org.opencontainers.image.title'], 'at-scheduler');
    // Only the name and the version label differ from the chart's image: the same bundle, byte for byte.
    const chartLayout = await openLayout(chartBuilt, join(outDir, 'layouts', 'at-scheduler-chart'));
    assert.deepEqual(layout.manifest.layers, chartLayout.manifest.layers);
  });

  it("at-scheduler's app layer holds exactly a fresh bundle's files, under /app, owned by root", async () => {
    const image = images.get('at-scheduler');
    assert.ok(image);
    const bundleDir = bundleDirOf(outDir, 'at-scheduler');
    await run(join(repositoryRoot, 'scripts', 'bundle.sh'), ['at-scheduler', bundleDir], {
      maxBuffer: 64 * 1024 * 1024,
    });
    // GNU tar archives the bundle as it stands on disk, owner forced to root as COPY does.
    const freshTar = join(outDir, 'fresh.tar');
    await run('tar', [
      '-cf',
      freshTar,
      '-C',
      bundleDir,
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--transform=s,^\\.,app,S', // names only, not link targets
      '.',
    ]);
    const expected = await layerListing(freshTar);
    expected.delete('app'); // the destination directory, which WORKDIR created in the layer below
    const layout = await openLayout(image, join(outDir, 'layouts', 'at-scheduler-app'));
    const appLayer = layout.manifest.layers.at(-1);
    assert.ok(appLayer);
    const actual = await layerListing(join(layout.into, 'blobs', ...appLayer.digest.split(':')));
    assert.ok(actual.has('app/dist/main.js'), [...actual.keys()].join(', '));
    for (const [path, description] of actual) {
      assert.ok(path.startsWith('app/'), path);
      assert.match(description, /^\S+ 0\/0\b/, path);
    }
    assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
    assert.deepEqual(actual, expected);
    assert.equal(image.appLayerBytes.compressed, appLayer.size);
  });

  it('the stand-in bases: distroless Node with its libraries and users, busybox under its normalized name', async () => {
    const distroless = bases.find((base) => base.name === 'gcr.io/distroless/nodejs24-debian12:nonroot');
    const busybox = bases.find((base) => base.name === busyboxImage);
    assert.ok(distroless && busybox);
    assert.equal(busyboxImage, 'docker.io/library/busybox:1.37.0');
    const node = await openLayout(distroless, join(outDir, 'layouts', 'distroless'));
    assert.deepEqual(node.config.config, {
      User: '65532',
      Env: [
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
      ],
      Entrypoint: ['/nodejs/bin/node'],
      WorkingDir: '/home/nonroot',
    });
    const [nodeLayer] = node.manifest.layers;
    assert.ok(nodeLayer);
    const files = await layerListing(join(node.into, 'blobs', ...nodeLayer.digest.split(':')));
    assert.match(files.get('nodejs/bin/node') ?? '', /^-rwx\S* 0\/0 \d+$/);
    assert.match(
      files.get('lib64/ld-linux-x86-64.so.2') ?? '',
      /^l.* -> \/lib\/x86_64-linux-gnu\/ld-linux-x86-64.so.2$/,
    );
    assert.match(files.get('lib/x86_64-linux-gnu/ld-linux-x86-64.so.2') ?? '', /^-/);
    assert.match(files.get('lib/x86_64-linux-gnu/libc.so.6') ?? '', /^-/);
    assert.equal(files.get('tmp'), 'drwxrwxrwt 0/0');
    assert.match(files.get('home/nonroot') ?? '', / 65532\/65532$/);
    const box = await openLayout(busybox, join(outDir, 'layouts', 'busybox'));
    const [boxLayer] = box.manifest.layers;
    assert.ok(boxLayer);
    const boxFiles = await layerListing(join(box.into, 'blobs', ...boxLayer.digest.split(':')));
    for (const applet of ['sh', 'echo', 'sleep', 'cat', 'head', 'dd', 'true', 'false', 'env', 'ls']) {
      assert.equal(boxFiles.get(`bin/${applet}`), 'lrwxrwxrwx 0/0 -> busybox', applet);
    }
    assert.equal(boxFiles.get('tmp'), 'drwxrwxrwt 0/0');
  });

  describe('in containerd', () => {
    it('imports at-scheduler and busybox under their names and runs them with runc', async (t) => {
      const unavailable = containerdUnavailableReason();
      if (unavailable) {
        t.skip(unavailable);
        return;
      }
      const image = images.get('at-scheduler');
      const busybox = bases.find((base) => base.name === busyboxImage);
      assert.ok(image && busybox);
      const containerd = await startPrivateContainerd();
      try {
        await importImage(image.archivePath, { address: containerd.address });
        await importImage(busybox.archivePath, { address: containerd.address });
        const listed = await containerd.ctr('images', 'list', '--quiet');
        assert.deepEqual(listed.trim().split('\n').sort(), [busyboxImage, image.name].sort());

        const version = await containerd.ctr(
          'run',
          '--rm',
          image.name,
          'version',
          '/nodejs/bin/node',
          'dist/main.js',
          '--version',
        );
        assert.match(version, new RegExp(`\\b${image.appVersion.replaceAll('.', '\\.')}\\b`));
        // The image config applies: user 65532, working directory /app, NODE_ENV from the Dockerfile.
        const identity = await containerd.ctr(
          'run',
          '--rm',
          image.name,
          'identity',
          '/nodejs/bin/node',
          '-p',
          '[process.getuid(), process.getgid(), process.cwd(), process.env.NODE_ENV].join(" ")',
        );
        assert.equal(identity.trim(), '65532 65532 /app production');

        const hi = await containerd.ctr('run', '--rm', busyboxImage, 'hi', '/bin/sh', '-c', 'echo hi');
        assert.equal(hi.trim(), 'hi');
      } finally {
        await containerd.stop();
      }
    });
  });
});

describe('controllerImageName', () => {
  const chartDefault = {
    name: 'ghcr.io/loopwright/at-scheduler:0.1.0',
    repository: 'ghcr.io/loopwright/at-scheduler',
    appVersion: '0.1.0',
  };

  it("is the chart's default image without a version or repository", () => {
    assert.equal(controllerImageName(chartDefault, {}), 'ghcr.io/loopwright/at-scheduler:0.1.0');
    // The chart's image.tag, where values.yaml sets one, names the default image; a release does not.
    const tagged = { ...chartDefault, name: 'ghcr.io/loopwright/at-scheduler:edge' };
    assert.equal(controllerImageName(tagged, {}), 'ghcr.io/loopwright/at-scheduler:edge');
    assert.equal(controllerImageName(tagged, { version: '1.2.3' }), 'ghcr.io/loopwright/at-scheduler:1.2.3');
  });

  it("takes the version and the repository each in place of the chart's", () => {
    assert.equal(
      controllerImageName(chartDefault, { version: '1.2.3' }),
      'ghcr.io/loopwright/at-scheduler:1.2.3',
    );
    assert.equal(
      controllerImageName(chartDefault, { repository: '127.0.0.1:5000/fork/at-scheduler' }),
      '127.0.0.1:5000/fork/at-scheduler:0.1.0',
    );
    assert.equal(
      controllerImageName(chartDefault, { version: '2.0.0', repository: 'ghcr.io/fork/at-scheduler' }),
      'ghcr.io/fork/at-scheduler:2.0.0',
    );
  });

  it('refuses what a registry would refuse at the push: a tag with +, an upper-case or tagged repository', () => {
    assert.throws(() => controllerImageName(chartDefault, { version: '1.0.0+build' }), /not a valid tag/);
    assert.throws(() => controllerImageName(chartDefault, { version: '' }), /not a valid tag/);
    assert.throws(
      () => controllerImageName(chartDefault, { repository: 'ghcr.io/Fork/at-scheduler' }),
      /lower-case/,
    );
    assert.throws(
      () => controllerImageName(chartDefault, { repository: 'ghcr.io/fork/at-scheduler:1' }),
      /without a tag/,
    );
    assert.throws(
      () => controllerImageName(chartDefault, { repository: 'ghcr.io/fork/at@sha256:00' }),
      /without a tag/,
    );
  });
});
