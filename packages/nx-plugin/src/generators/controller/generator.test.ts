import type { Tree } from '@nx/devkit';
import { FsTree } from '@nx/devkit/internal';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { helm, HelmError } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serveScript, serveWatchPaths } from '../../../../../scripts/serve/watch-paths.ts';
import controllerGenerator from './generator.ts';
import type { ControllerOptions } from './names.ts';
import { LIBRARY_CHART_YAML, libraryChartYaml, withLibraryChart } from './workspace.test-support.ts';

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

/**
 * The chart's files: only what is the controller's own, and the runtime's dashboard (a chart ships only
 * its own files; scripts/dashboards.ts keeps the copies equal). The Deployment, RBAC objects, Service,
 * monitors, PDB, NetworkPolicy and helm test come from the library chart, not from copies.
 */
const CHART_FILES = [
  'Chart.yaml',
  'README.md',
  'crds/widgets.widgets.example.com.yaml',
  'dashboards/loopwright-runtime.json',
  'templates/NOTES.txt',
  'templates/_helpers.tpl',
  'templates/controller.yaml',
  'values.schema.json',
  'values.yaml',
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
  const tree = withLibraryChart(createTreeWithEmptyWorkspace());
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

  it('creates the package, the chart (its own files only) and the e2e suite', async () => {
    await controllerGenerator(tree, widget);
    assert.deepEqual(filesUnder(tree, 'packages/widget-sync'), PACKAGE_FILES);
    assert.deepEqual(filesUnder(tree, 'charts/widget-sync'), CHART_FILES);
    assert.deepEqual(
      tree
        .listChanges()
        .filter((change) => change.path.startsWith('e2e/'))
        .map((change) => change.path)
        .sort(),
      [
        'e2e/expected/widget-sync.effective-rules.json',
        'e2e/expected/widget-sync.rbac.json',
        'e2e/src/widget-sync.chart.test.ts',
        'e2e/src/widget-sync.e2e.test.ts',
      ],
    );
    // Its one template calls the library chart, with the controller's rules from _helpers.tpl.
    assert.match(
      read(tree, 'charts/widget-sync/templates/controller.yaml'),
      /include "loopwright-controller\.objects" \(dict "top" \. "controller" \(dict\n {2}"rules" \(include "widget-sync\.rules" \.\)/,
    );
    const helpers = read(tree, 'charts/widget-sync/templates/_helpers.tpl');
    assert.deepEqual(
      [...helpers.matchAll(/define "([^"]+)"/g)].map(([, name]) => name),
      ['widget-sync.rules'],
    );
  });

  it('the chart depends on the workspace’s library chart at its version, read when generating', async () => {
    tree.write(LIBRARY_CHART_YAML, libraryChartYaml.replace(/^version: .*$/m, "version: '7.8.9'"));
    await controllerGenerator(tree, widget);
    const chart = read(tree, 'charts/widget-sync/Chart.yaml');
    assert.match(
      chart,
      /^dependencies:\n {2}- name: loopwright-controller\n {4}version: 7\.8\.9\n {4}repository: file:\/\/\.\.\/loopwright-controller\n/m,
    );
    // And from the repository's library chart as it is.
    const fresh = workspace();
    await controllerGenerator(fresh, widget);
    const version = /^version: (\S+)$/m.exec(libraryChartYaml)?.[1];
    assert.ok(version);
    assert.ok(read(fresh, 'charts/widget-sync/Chart.yaml').includes(`    version: ${version}\n`));
  });

  it('refuses to generate without the library chart, writing nothing', async () => {
    tree.delete(LIBRARY_CHART_YAML);
    const before = tree.listChanges().map((change) => change.path);
    await assert.rejects(controllerGenerator(tree, widget), {
      message: /^charts\/loopwright-controller\/Chart\.yaml is missing/,
    });
    assert.deepEqual(
      tree.listChanges().map((change) => change.path),
      before,
    );
  });

  it('the chart test registers the shared contract suite with the chart’s expectations, and copies none of it', async () => {
    await controllerGenerator(tree, widget);
    const test = read(tree, 'e2e/src/widget-sync.chart.test.ts');
    assert.match(
      test,
      /testChartContract\(\{\n {2}chart,\n {2}watchNamespaces: true,\n {2}workers: 1,\n {2}\/\/ Its program declares `sharding: true` \(src\/config\.ts\): the chart offers sharding\.enabled\.\n {2}sharding: true,\n\}\);/,
    );
    // The contract's tests are the suite's, not repeated here.
    for (const contract of ['helm lint', 'leader election off', 'ServiceMonitor', 'values.schema.json'])
      assert.ok(!test.includes(contract), contract);

    await controllerGenerator(tree, { ...widget, name: 'gizmo-sync', clusterScoped: true, owns: 'Secret' });
    assert.match(
      read(tree, 'e2e/src/gizmo-sync.chart.test.ts'),
      /testChartContract\(\{\n {2}chart,\n {2}watchNamespaces: false,\n {2}workers: 1,\n {2}\/\/ Its program declares `sharding: true` \(src\/config\.ts\): the chart offers sharding\.enabled\.\n {2}sharding: true,\n {2}\/\/ The owned Secrets are watched in every namespace\.\n {2}readsSecretsClusterWide: true,\n\}\);/,
    );
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

  it('builds no REST path: every API call of the package and its e2e suite goes through a resource handle', async () => {
    for (const clusterScoped of [false, true]) {
      const name = clusterScoped ? 'gizmo-sync' : 'widget-sync';
      await controllerGenerator(tree, {
        ...widget,
        name,
        clusterScoped,
        owns: 'ConfigMap,Deployment,a.example.com/v2/Policy',
      });
      for (const dir of [`packages/${name}/src`, 'e2e/src'])
        for (const file of filesUnder(tree, dir).filter((f) => f.endsWith('.ts')))
          assert.doesNotMatch(read(tree, `${dir}/${file}`), /['`]\/apis?\//, `${dir}/${file}`);
    }
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
    assert.match(controller, /for: GIZMO_RESOURCE,/);
    assert.match(
      read(tree, 'packages/gizmo-sync/src/resource.ts'),
      /kind: GIZMO_KIND,\n {2}namespaced: false,\n\}/,
    );
    assert.doesNotMatch(controller, /namespace/);
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
      /OWNED_CRDS|customresourcedefinitions/,
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

describe('the generated chart, written to disk', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'nx-plugin-chart-'));
  after(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  /** A workspace on disk whose charts/loopwright-controller is the repository's library chart. */
  function diskWorkspace(): { root: string; tree: Tree } {
    const root = mkdtempSync(join(scratch, 'workspace-'));
    mkdirSync(join(root, 'charts'));
    symlinkSync(join(repoRoot, 'charts/loopwright-controller'), join(root, 'charts/loopwright-controller'));
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ files: [], references: [] }));
    return { root, tree: new FsTree(root, false) };
  }

  /** Writes what the generator changed, as Nx does before it runs the returned callback. */
  function flush(tree: Tree, root: string): void {
    for (const { path, type } of tree.listChanges())
      if (type !== 'DELETE') {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), tree.read(path) ?? '');
      }
  }

  async function renderKinds(chartDir: string): Promise<string[]> {
    const { stdout } = await helm([
      'template',
      'rel',
      chartDir,
      '--namespace',
      'controllers',
      '--include-crds',
    ]);
    // Each document's top-level kind and metadata.name (helm writes them unindented and 2-indented).
    return stdout
      .split(/^---$/m)
      .flatMap((doc) => {
        const kind = /^kind: (\S+)$/m.exec(doc)?.[1];
        const name = /^metadata:\n(?: {2}.*\n)*? {2}name: "?([^"\s]+)"?$/m.exec(doc)?.[1];
        return kind === undefined ? [] : [`${kind}/${name ?? ''}`];
      })
      .sort();
  }

  for (const options of [widget, { ...widget, name: 'gizmo-sync', kind: 'Gizmo', clusterScoped: true }])
    it(`${options.clusterScoped ? 'cluster-scoped' : 'namespaced'}: the callback links the library chart; helm lints and renders it`, async () => {
      const { root, tree } = diskWorkspace();
      const callback = await controllerGenerator(tree, { ...options, skipInstall: true });
      flush(tree, root);
      const chartDir = join(root, 'charts', options.name);
      const link = join(chartDir, 'charts/loopwright-controller');
      assert.throws(() => lstatSync(link), { code: 'ENOENT' });
      await callback();
      assert.ok(lstatSync(link).isSymbolicLink());
      // Relative, as the committed charts have it: the checkout can move.
      assert.equal(readlinkSync(link), '../../loopwright-controller');
      // Run again, it keeps the link; anything else in its place is refused, not replaced.
      await callback();
      assert.equal(readlinkSync(link), '../../loopwright-controller');
      rmSync(link);
      mkdirSync(link);
      await assert.rejects(async () => callback(), /is not a link to \.\.\/\.\.\/loopwright-controller/);
      rmSync(link, { recursive: true });
      await callback();
      assert.equal(
        readFileSync(join(link, 'Chart.yaml'), 'utf8'),
        readFileSync(join(repoRoot, LIBRARY_CHART_YAML), 'utf8'),
      );

      await helm(['lint', '--strict', chartDir]);
      const name = `rel-${options.name}`;
      const plural = options.clusterScoped ? 'gizmos' : 'widgets';
      assert.deepEqual(await renderKinds(chartDir), [
        `ClusterRole/${name}`,
        `ClusterRoleBinding/${name}`,
        `CustomResourceDefinition/${plural}.widgets.example.com`,
        `Deployment/${name}`,
        `Pod/${name}-test`,
        `Role/${name}-leader-election`,
        `Role/${name}-test`,
        `RoleBinding/${name}-leader-election`,
        `RoleBinding/${name}-test`,
        `Service/${name}-metrics`,
        `ServiceAccount/${name}`,
        `ServiceAccount/${name}-test`,
      ]);
      // The library's PrometheusRule (the runtime alerts) and the dashboards ConfigMap (the runtime's
      // dashboard) come with the generated values.
      const monitored = await helm([
        'template',
        'rel',
        chartDir,
        '--set',
        'prometheusRule.enabled=true,dashboards.enabled=true',
        '--show-only',
        'templates/controller.yaml',
      ]);
      assert.match(monitored.stdout, new RegExp(`^kind: PrometheusRule\n(?:.*\n)*?  name: ${name}$`, 'm'));
      assert.match(monitored.stdout, /^ {8}- alert: LoopwrightNoLeader$/m);
      assert.match(monitored.stdout, /^ {2}loopwright-runtime\.json: /m);
      // The chart's values schema admits watchNamespaces exactly when its kind is namespaced.
      const watch = helm(['template', 'rel', chartDir, '--set-json', 'watchNamespaces=["team-a"]']);
      if (options.clusterScoped) await assert.rejects(watch, HelmError);
      else assert.match((await watch).stdout, /value: "team-a"/);
    });
});
