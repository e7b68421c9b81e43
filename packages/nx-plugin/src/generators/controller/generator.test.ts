import type { Tree } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serveScript, serveWatchPaths } from '../../../../../scripts/serve/watch-paths.ts';
import controllerGenerator from './generator.ts';
import type { ControllerOptions } from './names.ts';

const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

const widget: ControllerOptions = {
  name: 'widget-sync',
  group: 'widgets.example.com',
  apiVersion: 'v1alpha1',
  kind: 'Widget',
};

/** The package's files, as the contract and the other controllers have them. */
const PACKAGE_FILES = [
  'README.md',
  'package.json',
  'samples/widget.yaml',
  'src/api.ts',
  'src/config.ts',
  'src/controller.ts',
  'src/decide.test.ts',
  'src/decide.ts',
  'src/index.ts',
  'src/main.ts',
  'src/reasons.ts',
  'src/reconcile.test.ts',
  'src/reconcile.ts',
  'src/resource.ts',
  'src/widget-sync.int.test.ts',
  'stryker.config.json',
  'tsconfig.build.json',
  'tsconfig.json',
];

/** Every file under `dir`, relative to it, sorted. */
function filesUnder(tree: Tree, dir: string): string[] {
  const walk = (path: string): string[] =>
    tree.isFile(path) ? [path] : tree.children(path).flatMap((child) => walk(`${path}/${child}`));
  return walk(dir)
    .map((path) => path.slice(dir.length + 1))
    .sort();
}

/**
 * An empty workspace with the repository's root tsconfig.json and no formatter, so that the tests read
 * the templates' output as rendered (formatting is Prettier's business).
 */
function workspace(): Tree {
  const tree = createTreeWithEmptyWorkspace();
  tree.delete('.oxfmtrc.json');
  tree.write(
    'tsconfig.json',
    JSON.stringify({ files: [], references: [{ path: 'packages/runtime/tsconfig.build.json' }] }),
  );
  return tree;
}

function read(tree: Tree, path: string): string {
  const content = tree.read(path, 'utf-8');
  assert.ok(content !== null, `${path} exists`);
  return content;
}

describe('controller generator', () => {
  let tree: Tree;

  beforeEach(() => {
    tree = workspace();
  });

  it('creates the package, the chart and the e2e suite', async () => {
    await controllerGenerator(tree, widget);
    assert.deepEqual(filesUnder(tree, 'packages/widget-sync'), PACKAGE_FILES);
    assert.ok(tree.exists('charts/widget-sync/Chart.yaml'));
    assert.ok(tree.exists('charts/widget-sync/crds/widgets.widgets.example.com.yaml'));
    assert.ok(tree.exists('e2e/src/widget-sync.chart.test.ts'));
    assert.ok(tree.exists('e2e/expected/widget-sync.rbac.json'));
  });

  it('substitutes every template variable: no EJS tag and no .template suffix is left', async () => {
    await controllerGenerator(tree, { ...widget, owns: 'ConfigMap' });
    for (const dir of ['packages/widget-sync', 'charts/widget-sync', 'e2e'])
      for (const file of filesUnder(tree, dir)) {
        assert.doesNotMatch(file, /\.template$|__\w+__/, `${dir}/${file}`);
        assert.doesNotMatch(read(tree, `${dir}/${file}`), /<%|%>/, `${dir}/${file}`);
      }
    const manifest = JSON.parse(read(tree, 'packages/widget-sync/package.json')) as {
      name: string;
      nx: { tags: string[] };
    };
    assert.equal(manifest.name, '@loopwright/widget-sync');
    assert.deepEqual(manifest.nx.tags, ['controller']);
    const resource = read(tree, 'packages/widget-sync/src/resource.ts');
    assert.match(resource, /export const WIDGET_GROUP = 'widgets\.example\.com';/);
    assert.match(resource, /export const WIDGET_VERSION = 'v1alpha1';/);
    assert.match(resource, /export const WIDGET_PLURAL = 'widgets';/);
    assert.match(resource, /\{ group: '', version: 'v1', plural: 'configmaps' \}/);
    assert.match(
      read(tree, 'packages/widget-sync/src/config.ts'),
      /name: 'widget-sync',[^]*namespaced: true,/,
    );
    assert.match(
      read(tree, 'packages/widget-sync/samples/widget.yaml'),
      /^apiVersion: widgets\.example\.com\/v1alpha1\nkind: Widget$/m,
    );
    assert.match(
      read(tree, 'packages/widget-sync/src/widget-sync.int.test.ts'),
      /a change of an owned ConfigMap/,
    );
  });

  it('serves from source, watching its own src and the src of the workspace packages it depends on, transitively, not node_modules', async () => {
    await controllerGenerator(tree, widget);
    const manifest = JSON.parse(read(tree, 'packages/widget-sync/package.json')) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
    };
    // Against the repository's packages, where the generated one will live.
    const packageDir = join(repoRoot, 'packages/widget-sync');
    assert.equal(
      manifest.scripts.serve,
      serveScript(serveWatchPaths(packageDir, manifest.dependencies, repoRoot)),
    );
    assert.match(manifest.scripts.serve, /^exec node .* --watch-path=\.\.\/runtime\/src /);
  });

  it('a namespaced controller: one per watched namespace; a cluster-scoped one: one controller, no namespaces', async () => {
    await controllerGenerator(tree, widget);
    assert.match(
      read(tree, 'packages/widget-sync/src/controller.ts'),
      /export function createWidgetControllers\(/,
    );
    assert.match(read(tree, 'packages/widget-sync/src/main.ts'), /standard\.watchNamespace/);

    await controllerGenerator(tree, { ...widget, name: 'gizmo-sync', kind: 'Gizmo', clusterScoped: true });
    const controller = read(tree, 'packages/gizmo-sync/src/controller.ts');
    assert.match(controller, /export function createGizmoController\(/);
    // No namespace anywhere, only the primary's scope, which keys its owned objects' owner by name.
    assert.match(controller, /kind: GIZMO_KIND, namespaced: false \}/);
    assert.doesNotMatch(controller.replace('namespaced: false', ''), /namespace/);
    assert.doesNotMatch(read(tree, 'packages/gizmo-sync/src/main.ts'), /watchNamespace/);
    assert.match(read(tree, 'packages/gizmo-sync/src/config.ts'), /namespaced: false,/);
    assert.match(read(tree, 'charts/gizmo-sync/crds/gizmos.widgets.example.com.yaml'), /scope: Cluster/);
  });

  it('without a built-in owned kind, no owned-object integration test', async () => {
    await controllerGenerator(tree, { ...widget, owns: 'cluster.x-k8s.io/v1beta2/Cluster' });
    assert.doesNotMatch(
      read(tree, 'packages/widget-sync/src/widget-sync.int.test.ts'),
      /a change of an owned/,
    );
    assert.match(
      read(tree, 'packages/widget-sync/src/resource.ts'),
      /group: 'cluster\.x-k8s\.io', version: 'v1beta2', plural: 'clusters'/,
    );
  });

  it('an owned custom kind: the integration test installs a minimal CRD of it first; the READMEs ask for it in the cluster', async () => {
    await controllerGenerator(tree, {
      ...widget,
      owns: 'Pod,cluster.x-k8s.io/v1beta2/Cluster,a.example.com/v2/Policy',
    });
    const test = read(tree, 'packages/widget-sync/src/widget-sync.int.test.ts');
    assert.match(test, /scope: 'Namespaced',/);
    assert.match(
      test,
      /const OWNED_CRDS = \[\n {2}anyFieldsCrd\('cluster\.x-k8s\.io', 'v1beta2', 'Cluster', 'clusters'\),\n {2}anyFieldsCrd\('a\.example\.com', 'v2', 'Policy', 'policies'\),\n\];/,
    );
    assert.match(test, /'x-kubernetes-preserve-unknown-fields': true/);
    // Before the controller starts, after the chart's CRD.
    const [chartCrd, owned, started] = [
      test.indexOf('readCrdDirectory(CRD_DIR)'),
      test.indexOf('await applyCrds(kc, missing'),
      test.indexOf('controller = startController('),
    ];
    assert.ok(chartCrd > 0 && chartCrd < owned && owned < started, `${chartCrd} ${owned} ${started}`);
    assert.match(
      read(tree, 'packages/widget-sync/README.md'),
      /The CRDs of the custom kinds it owns must be installed in the cluster too[^]*`clusters\.cluster\.x-k8s\.io`, `policies\.a\.example\.com`/,
    );
    assert.match(
      read(tree, 'charts/widget-sync/README.md'),
      /\(`clusters\.cluster\.x-k8s\.io`, `policies\.a\.example\.com`\) are\nnot in `crds\/`: they must be installed in the cluster/,
    );

    await controllerGenerator(tree, {
      ...widget,
      name: 'gizmo-sync',
      clusterScoped: true,
      owns: 'a.example.com/v2/Policy',
    });
    assert.match(read(tree, 'packages/gizmo-sync/src/gizmo-sync.int.test.ts'), /scope: 'Cluster',/);
  });

  it('built-in owned kinds only: no CRD of theirs is installed, nothing asked of the cluster', async () => {
    await controllerGenerator(tree, { ...widget, owns: 'Pod,Deployment' });
    assert.doesNotMatch(
      read(tree, 'packages/widget-sync/src/widget-sync.int.test.ts'),
      /OWNED_CRDS|isNotFound/,
    );
    assert.doesNotMatch(read(tree, 'packages/widget-sync/README.md'), /custom kinds/);
    assert.doesNotMatch(read(tree, 'charts/widget-sync/README.md'), /custom kinds/);
  });

  it('adds the package to the root tsconfig.json references, after the existing ones', async () => {
    await controllerGenerator(tree, widget);
    assert.deepEqual(JSON.parse(read(tree, 'tsconfig.json')), {
      files: [],
      references: [
        { path: 'packages/runtime/tsconfig.build.json' },
        { path: 'packages/widget-sync/tsconfig.build.json' },
      ],
    });
  });

  it('refuses a name whose package or chart exists, writing nothing', async () => {
    for (const taken of ['packages/widget-sync', 'charts/widget-sync']) {
      const fresh = workspace();
      fresh.write(`${taken}/README.md`, 'taken');
      const before = fresh.listChanges().length;
      await assert.rejects(controllerGenerator(fresh, widget), {
        name: 'InvalidOptionError',
        message: `name: ${taken} already exists; pick another name`,
      });
      assert.equal(fresh.listChanges().length, before);
    }
  });

  it('refuses the name of a workspace project elsewhere (e2e, scripts), or of a top-level directory, writing nothing', async () => {
    const cases: { write: Record<string, string>; name: string; message: string }[] = [
      {
        write: { 'e2e/package.json': JSON.stringify({ name: '@loopwright/e2e' }) },
        name: 'e2e',
        message: 'name: @loopwright/e2e is already the workspace project in e2e; pick another name',
      },
      {
        write: { 'scripts/package.json': JSON.stringify({ name: '@loopwright/scripts' }) },
        name: 'scripts',
        message: 'name: @loopwright/scripts is already the workspace project in scripts; pick another name',
      },
      {
        // The project's name, wherever it lives.
        write: { 'tools/lint/package.json': JSON.stringify({ name: '@loopwright/widget-sync' }) },
        name: 'widget-sync',
        message:
          'name: @loopwright/widget-sync is already the workspace project in tools/lint; pick another name',
      },
      {
        write: { 'docs/index.md': '# Docs' },
        name: 'docs',
        message: 'name: docs already exists at the workspace root; pick another name',
      },
    ];
    for (const { write, name, message } of cases) {
      const fresh = workspace();
      // Nx finds the package.json projects of the pnpm workspace, as in the repository.
      fresh.write('pnpm-workspace.yaml', 'packages:\n  - packages/*\n  - e2e\n  - scripts\n  - tools/*\n');
      for (const [path, content] of Object.entries(write)) fresh.write(path, content);
      const before = fresh.listChanges().map((change) => change.path);
      await assert.rejects(controllerGenerator(fresh, { ...widget, name }), {
        name: 'InvalidOptionError',
        message,
      });
      assert.deepEqual(
        fresh.listChanges().map((change) => change.path),
        before,
      );
    }
  });

  it('keeps the root tsconfig.json as it is laid out, one reference per line: one line added', async () => {
    const layout = [
      '{',
      '  "files": [],',
      '  "references": [',
      '    { "path": "packages/core/tsconfig.build.json" },',
      '    { "path": "packages/runtime/tsconfig.build.json" }',
      '  ]',
      '}',
      '',
    ];
    tree.write('tsconfig.json', layout.join('\n'));
    await controllerGenerator(tree, widget);
    assert.equal(
      read(tree, 'tsconfig.json'),
      [
        ...layout.slice(0, 4),
        '    { "path": "packages/runtime/tsconfig.build.json" },',
        '    { "path": "packages/widget-sync/tsconfig.build.json" }',
        ...layout.slice(5),
      ].join('\n'),
    );
  });

  it('refuses invalid options before writing anything', async () => {
    const before = tree.listChanges().length;
    await assert.rejects(controllerGenerator(tree, { ...widget, owns: 'Gizmo' }), {
      name: 'InvalidOptionError',
      message: /^--owns: unknown kind "Gizmo"/,
    });
    assert.equal(tree.listChanges().length, before);
  });

  it('returns the step that runs after Nx wrote the files (pnpm install, pnpm generate)', async () => {
    assert.equal(typeof (await controllerGenerator(tree, widget)), 'function');
  });
});
