import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { driftedCopies, source } from './dashboards.ts';

describe('the runtime dashboard copies', () => {
  it('every controller chart and the generator ship the source as it is (run `pnpm generate` after editing it)', () => {
    assert.deepEqual(driftedCopies(), []);
  });

  it('names a copy that differs, and one that is missing', () => {
    const root = mkdtempSync(join(tmpdir(), 'dashboards-'));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(join(root, path, '..'), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      for (const name of ['a', 'b', 'c'])
        write(
          `packages/${name}/package.json`,
          JSON.stringify({ name: `@x/${name}`, nx: { tags: ['controller'] } }),
        );
      write(source, '{"uid": "loopwright-runtime"}\n');
      write('charts/a/dashboards/loopwright-runtime.json', '{"uid": "loopwright-runtime"}\n');
      write('charts/b/dashboards/loopwright-runtime.json', '{"uid": "loopwright-runtime", "old": true}\n');
      write(
        'packages/nx-plugin/src/generators/controller/files/chart/dashboards/loopwright-runtime.json',
        '{"uid": "loopwright-runtime"}\n',
      );
      assert.deepEqual(driftedCopies(root), [
        'charts/b/dashboards/loopwright-runtime.json',
        'charts/c/dashboards/loopwright-runtime.json',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
