/**
 * A kind may be named like anything the templates use: what they import (the runtime's `Controller` and
 * `Manager`, the test helpers' `KubeConfig`...), declare (`Running`, `MERGE`) or take from the globals
 * (`Date`, `Promise`). The list is read from the templates (identifiers.ts); the controller generated
 * with each of them as its kind, its package and its e2e files, must type-check with the workspace's
 * compiler settings against the workspace's own packages (one `tsc` over all of them, in a scratch
 * directory linked to the repository). The few such names the generated package itself exports, or its
 * generated types import, are refused instead.
 */
import type { Tree } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateCrdTypes } from '../../../../../scripts/crd-types.ts';
import controllerGenerator from './generator.ts';
import { templateCodeIdentifiers, templatesIdentifiers } from './identifiers.ts';
import { GENERATED_TYPES_IMPORTS, type ControllerOptions } from './names.ts';
import { withLibraryChart } from './workspace.test-support.ts';

const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));
const FILES = fileURLToPath(new URL('files/', import.meta.url));
const tsc = join(repoRoot, 'node_modules/.bin/tsc');

const scratch = mkdtempSync(join(tmpdir(), 'nx-plugin-kinds-'));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** Every `*.ts.template` under files/, with its text. */
function templates(dir = FILES): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return templates(path);
    return entry.name.endsWith('.ts.template') ? [{ path, text: readFileSync(path, 'utf8') }] : [];
  });
}

/** The names of the templates' import declarations (`import { a, type B as C } from`: a, C). */
function importedNames(): Set<string> {
  const names = new Set<string>();
  for (const { text } of templates()) {
    // An EJS output tag makes a name derived from the options (`kube<%= kind %>Api`): not the template's.
    const code = text.replace(/<%[=-][\s\S]*?%>/g, '<derived>').replace(/<%[\s\S]*?%>/g, ' ');
    for (const [, clause = ''] of code.matchAll(/^import (?:type )?([^'"]*?) from '/gm))
      for (const part of clause.replace(/[{}]/g, ',').split(',')) {
        const name =
          part
            .trim()
            .replace(/^type /, '')
            .split(/\s+as\s+/)
            .at(-1) ?? '';
        if (/^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
        else
          assert.ok(
            name === '' || name.includes('<derived>'),
            `an import clause the test cannot read: ${part}`,
          );
      }
  }
  return names;
}

const used = templatesIdentifiers(FILES);
/** The identifiers that are valid kinds. */
const kindLike = used.filter((identifier) => /^[A-Z][A-Za-z0-9]*$/.test(identifier));
const exported = [
  ...templateCodeIdentifiers(readFileSync(join(FILES, 'package/src/index.ts.template'), 'utf8')),
].filter((identifier) => /^[A-Z][A-Za-z0-9]*$/.test(identifier));
const refusedKinds = [...exported, ...GENERATED_TYPES_IMPORTS];

const options = (kind: string, namespaced: boolean): ControllerOptions => ({
  name: `${namespaced ? 'n' : 'c'}-${kind.toLowerCase()}`,
  group: 'kinds.example.com',
  apiVersion: 'v1',
  kind,
  shortName: 'kd',
  clusterScoped: !namespaced,
  // A built-in and a custom owned kind: every branch of the templates.
  owns: 'ConfigMap,cluster.x-k8s.io/v1beta2/Cluster',
});

/** Links `path` to the repository's `target`. */
function link(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/**
 * The scratch workspace's `packages/node_modules`: each dependency of a generated package, linked as
 * pnpm links it (a workspace package to its directory, any other to a workspace package's copy).
 */
function linkDependencies(manifest: { dependencies?: object; devDependencies?: object }, root: string): void {
  const packages = readdirSync(join(repoRoot, 'packages'));
  for (const dependency of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) {
    const path = join(root, 'packages/node_modules', dependency);
    if (existsSync(path)) continue;
    const workspace = /^@loopwright\/(.+)$/.exec(dependency)?.[1];
    const target =
      workspace === undefined
        ? packages.map((dir) => join(repoRoot, 'packages', dir, 'node_modules', dependency)).find(existsSync)
        : join(repoRoot, 'packages', workspace);
    assert.ok(target !== undefined && existsSync(target), `${dependency} is in no workspace package`);
    link(target, path);
  }
}

/** Writes the generated files of `tree` under `root`, with the CRD types `pnpm generate` would write. */
function writeGenerated(tree: Tree, root: string, name: string): string[] {
  const written: string[] = [];
  for (const { path, type } of tree.listChanges())
    if (type !== 'DELETE' && /^(packages|charts|e2e)\//.test(path)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), tree.read(path) ?? '');
      if (path.endsWith('.ts')) written.push(path);
    }
  const crds = join(root, 'charts', name, 'crds');
  const types = `packages/${name}/src/generated/types.ts`;
  mkdirSync(dirname(join(root, types)), { recursive: true });
  writeFileSync(join(root, types), generateCrdTypes(readdirSync(crds).map((file) => join(crds, file))));
  linkDependencies(JSON.parse(tree.read(`packages/${name}/package.json`, 'utf-8') ?? '{}') as object, root);
  return [...written, types];
}

describe('a kind named like an identifier of the templates', () => {
  it('the list read from the templates has every name they import, and the audit’s clashes', () => {
    const missing = [...importedNames()].filter((name) => !used.includes(name));
    assert.deepEqual(missing, []);
    for (const kind of ['Controller', 'Manager', 'KubeClient', 'KubeConfig', 'Reconciler', 'Metrics', 'Date'])
      assert.ok(kindLike.includes(kind), kind);
  });

  it('no identifier of the templates looks like a name the generator derives from a kind', () => {
    // `<Kind>Api`, `create<Kind>Controllers`, `<PREFIX>_GROUP`...: never taken, whatever the kind.
    const derived =
      /Api$|^create.*(Controllers?|Reconciler)$|(Controller|Reconciler)Options$|_(GROUP|VERSION|KIND|PLURAL|RESOURCE)$/;
    assert.deepEqual(
      used.filter((identifier) => derived.test(identifier)),
      [],
    );
  });

  it('refuses exactly the names the package exports besides the kind, and the generated types’ import', async () => {
    assert.deepEqual(exported.sort(), ['ConditionType', 'ReadyReason', 'StatusPatch']);
    for (const kind of refusedKinds)
      await assert.rejects(
        controllerGenerator(withLibraryChart(createTreeWithEmptyWorkspace()), options(kind, true)),
        {
          name: 'InvalidOptionError',
          message: new RegExp(`^--kind: "${kind}" is `),
        },
      );
  });

  it('with each other one as the kind, namespaced and cluster-scoped, the generated code type-checks', async () => {
    const root = join(scratch, 'workspace');
    link(join(repoRoot, 'tsconfig.base.json'), join(root, 'tsconfig.base.json'));
    link(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
    link(join(repoRoot, 'e2e/node_modules'), join(root, 'e2e/node_modules'));
    link(join(repoRoot, 'e2e/package.json'), join(root, 'e2e/package.json'));
    // The e2e suite's helpers, which the generated e2e files import.
    for (const file of readdirSync(join(repoRoot, 'e2e/src')).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
    ))
      link(join(repoRoot, 'e2e/src', file), join(root, 'e2e/src', file));

    const files: string[] = [];
    const kinds = kindLike.filter((kind) => !refusedKinds.includes(kind));
    for (const kind of kinds)
      for (const namespaced of [true, false]) {
        const tree = withLibraryChart(createTreeWithEmptyWorkspace());
        tree.delete('.oxfmtrc.json');
        tree.write('tsconfig.json', JSON.stringify({ files: [], references: [] }));
        const generated = options(kind, namespaced);
        await controllerGenerator(tree, generated);
        files.push(...writeGenerated(tree, root, generated.name));
      }
    writeFileSync(
      join(root, 'tsconfig.json'),
      JSON.stringify({ extends: './tsconfig.base.json', compilerOptions: { noEmit: true }, files }),
    );
    const { status, stdout, stderr } = spawnSync(tsc, ['-p', join(root, 'tsconfig.json')], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(
      status,
      0,
      `tsc over ${kinds.length} kinds (${kinds.join(', ')}):\n${`${stdout}${stderr}`.slice(0, 20_000)}`,
    );
  });
});
