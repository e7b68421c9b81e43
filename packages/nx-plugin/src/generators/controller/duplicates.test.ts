/**
 * The generated package copies no block from the workspace's controllers: what they share belongs in
 * @loopwright/runtime, which the generated code calls instead. jscpd (its defaults: 50 tokens, 5 lines)
 * runs over the generated src/, formatted as the generator formats it, beside every controller's src/;
 * any clone with a generated file fails the test. Clones among the existing controllers are theirs, not
 * this test's. Nothing is allow-listed.
 */
import type { Tree } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { workspaceControllers } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import controllerGenerator from './generator.ts';
import type { ControllerOptions } from './names.ts';
import { withLibraryChart } from './workspace.test-support.ts';

const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));
const jscpd = fileURLToPath(new URL('../../../node_modules/.bin/jscpd', import.meta.url));

interface Clone {
  tokens: number;
  lines: number;
  fragment: string;
  firstFile: { name: string; start: number; end: number };
  secondFile: { name: string; start: number; end: number };
}

const scratch = mkdtempSync(join(tmpdir(), 'nx-plugin-duplicates-'));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** Generates the controller and writes its src/, formatted with the repository's Prettier settings, under `scratch`. */
async function generatedSources(options: ControllerOptions): Promise<string> {
  const tree: Tree = withLibraryChart(createTreeWithEmptyWorkspace());
  // Formatted below with the repository's settings, not by Nx's default formatter (oxfmt) for this tree.
  tree.delete('.oxfmtrc.json');
  tree.write('tsconfig.json', JSON.stringify({ files: [], references: [] }));
  await controllerGenerator(tree, options);
  const src = `packages/${options.name}/src`;
  const out = join(scratch, options.name, 'src');
  for (const file of tree.children(src).filter((child) => tree.isFile(`${src}/${child}`))) {
    const path = join(repoRoot, src, file);
    const config = await resolveConfig(path);
    mkdirSync(dirname(join(out, file)), { recursive: true });
    writeFileSync(
      join(out, file),
      await format(tree.read(`${src}/${file}`, 'utf-8') ?? '', { ...config, filepath: path }),
    );
  }
  return out;
}

/** jscpd's clones among `dirs` (TypeScript; the CRD-generated types are not code anyone wrote). */
function clones(dirs: string[]): Clone[] {
  const output = join(scratch, `report-${dirs.length}-${Date.now()}`);
  execFileSync(
    jscpd,
    [
      ...['--min-tokens', '50', '--min-lines', '5', '--format', 'typescript'],
      ...['--ignore', '**/generated/**', '--reporters', 'json', '--output', output, '--absolute', '--silent'],
      ...dirs,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return (JSON.parse(readFileSync(join(output, 'jscpd-report.json'), 'utf8')) as { duplicates: Clone[] })
    .duplicates;
}

function describeClone(clone: Clone): string {
  const where = (file: Clone['firstFile']) => `${file.name}:${file.start}-${file.end}`;
  return `${where(clone.firstFile)} = ${where(clone.secondFile)} (${clone.tokens} tokens)\n${clone.fragment}`;
}

const variants: ControllerOptions[] = [
  {
    name: 'widget-sync',
    group: 'widgets.example.com',
    apiVersion: 'v1alpha1',
    kind: 'Widget',
    owns: 'ConfigMap',
  },
  { name: 'gizmo-keeper', group: 'gizmos.example.com', apiVersion: 'v1', kind: 'Gizmo', clusterScoped: true },
];

describe('the generated package duplicates no block of the controllers', () => {
  const controllers = workspaceControllers(repoRoot).map((controller) => join(controller.packageDir, 'src'));

  it('the workspace has controllers to compare with', () => {
    assert.ok(controllers.length >= 3, controllers.join(', '));
  });

  for (const options of variants)
    it(`${options.name} (${options.clusterScoped ? 'cluster-scoped' : `namespaced, owns ${options.owns ?? ''}`})`, async () => {
      const generated = await generatedSources(options);
      const involved = clones([generated, ...controllers]).filter((clone) =>
        [clone.firstFile.name, clone.secondFile.name].some((name) => name.startsWith(generated)),
      );
      assert.deepEqual(involved.map(describeClone), []);
    });
});
