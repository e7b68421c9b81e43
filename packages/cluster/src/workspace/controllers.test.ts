import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { controllerProgram, workspaceControllers } from './controllers.ts';
import { repositoryRoot } from './repository-root.ts';

async function writePackage(root: string, dir: string, manifest: object): Promise<void> {
  await mkdir(join(root, 'packages', dir), { recursive: true });
  await writeFile(join(root, 'packages', dir, 'package.json'), JSON.stringify(manifest));
}

describe('workspaceControllers', () => {
  let root: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'loopwright-workspace-'));
    // Created out of order: the result's order must not be the file system's.
    await writePackage(root, 'widget-sync', {
      name: '@loopwright/widget-sync',
      nx: { tags: ['controller'] },
    });
    await writePackage(root, 'runtime', { name: '@loopwright/runtime' });
    await writePackage(root, 'metrics', { name: '@loopwright/metrics', nx: { tags: ['library'] } });
    await writePackage(root, 'at-scheduler', {
      name: '@loopwright/at-scheduler',
      nx: { tags: ['scope:demo', 'controller'] },
    });
    await mkdir(join(root, 'packages', 'not-a-package'));
    await mkdir(join(root, 'charts', 'at-scheduler', 'crds'), { recursive: true });
    for (const file of ['b.yaml', 'a.yaml', 'README.md'])
      await writeFile(join(root, 'charts', 'at-scheduler', 'crds', file), '');
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('finds the packages tagged controller, and only those, sorted by name', () => {
    assert.deepEqual(workspaceControllers(root), [
      {
        name: 'at-scheduler',
        packageName: '@loopwright/at-scheduler',
        packageDir: join(root, 'packages', 'at-scheduler'),
        chartDir: join(root, 'charts', 'at-scheduler'),
        crdFiles: [
          join(root, 'charts', 'at-scheduler', 'crds', 'a.yaml'),
          join(root, 'charts', 'at-scheduler', 'crds', 'b.yaml'),
        ],
      },
      {
        name: 'widget-sync',
        packageName: '@loopwright/widget-sync',
        packageDir: join(root, 'packages', 'widget-sync'),
        chartDir: join(root, 'charts', 'widget-sync'),
        crdFiles: [],
      },
    ]);
  });

  it('fails on a tagged package without a name', async () => {
    await writePackage(root, 'nameless', { nx: { tags: ['controller'] } });
    try {
      assert.throws(() => workspaceControllers(root), /packages\/nameless\/package\.json: no name/);
    } finally {
      await rm(join(root, 'packages', 'nameless'), { recursive: true });
    }
  });

  it("counts this repository's three controllers among its controllers (their package.json tag)", () => {
    const names = workspaceControllers(repositoryRoot).map((controller) => controller.name);
    for (const name of ['at-scheduler', 'cloud-node', 'mailgun-cluster'])
      assert.ok(names.includes(name), name);
  });

  it("controllerProgram: the program a controller's src/config.ts declares", async () => {
    const [atScheduler] = workspaceControllers(repositoryRoot).filter((c) => c.name === 'at-scheduler');
    assert.ok(atScheduler);
    const program = await controllerProgram<{ name: string; namespaced: boolean }>(atScheduler);
    assert.equal(program.name, 'at-scheduler');
    assert.equal(program.namespaced, true);
  });
});
