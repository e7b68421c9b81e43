import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { readPackageInfo } from './package-info.ts';

describe('readPackageInfo', () => {
  const dir = mkdtempSync(join(tmpdir(), 'package-info-test-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const write = (manifest: unknown): URL => {
    const path = join(dir, `${String(Math.random()).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(manifest));
    return pathToFileURL(path);
  };

  it('reads name without its scope, version and description', () => {
    assert.deepEqual(
      readPackageInfo(write({ name: '@loopwright/at-scheduler', version: '0.1.0', description: 'Runs At' })),
      { name: 'at-scheduler', version: '0.1.0', description: 'Runs At' },
    );
    assert.deepEqual(readPackageInfo(write({ name: 'plain', version: '2.0.0-rc.1' })), {
      name: 'plain',
      version: '2.0.0-rc.1',
      description: '',
    });
  });

  it('reads this package, located relative to the module as main.ts does', () => {
    assert.equal(readPackageInfo(new URL('../../package.json', import.meta.url)).name, 'runtime');
  });

  it('a manifest without name or version is an error naming the file', () => {
    const url = write({ name: 'x' });
    assert.throws(() => readPackageInfo(url), {
      message: `${url.pathname}: expected a package.json with a name and a version`,
    });
  });
});
