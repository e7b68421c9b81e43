import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildPauseImage } from './base-images.ts';
import { pauseImage } from './pause.ts';

const run = promisify(execFile);

describe('buildPauseImage', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopwright-pause-test-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('packs the given binary as /pause, run as 65535, under the sandbox image name', async () => {
    // Any executable does for packing; the real one comes from the node harness's Go build.
    const archive = await buildPauseImage(process.execPath, join(dir, 'out'));
    const layout = join(dir, 'layout');
    await run('mkdir', [layout]);
    await run('tar', ['-xf', archive, '-C', layout]);
    const blob = async (digest: string) =>
      JSON.parse(await readFile(join(layout, 'blobs', ...digest.split(':')), 'utf8')) as Record<
        string,
        unknown
      >;
    const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as {
      manifests: { digest: string; annotations: Record<string, string> }[];
    };
    assert.equal(pauseImage, 'loopwright.local/pause:3.10');
    assert.equal(index.manifests[0]?.annotations['io.containerd.image.name'], pauseImage);
    const [descriptor] = index.manifests;
    assert.ok(descriptor);
    const manifest = (await blob(descriptor.digest)) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    const config = (await blob(manifest.config.digest)) as { config: unknown };
    assert.deepEqual(config.config, { User: '65535:65535', Entrypoint: ['/pause'], WorkingDir: '/' });
    const { stdout } = await run('tar', [
      '-tvzf',
      join(layout, 'blobs', ...(manifest.layers[0]?.digest ?? '').split(':')),
      '--numeric-owner',
    ]);
    assert.match(stdout.trim(), /^-rwxr-xr-x 0\/0 +\d+ \S+ \S+ pause$/);
  });
});
