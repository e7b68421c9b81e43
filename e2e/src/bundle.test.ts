/**
 * What each image ships, proven without a Docker engine: `scripts/bundle.sh` (the Dockerfile's build
 * stage) builds the controller's bundle into a temporary directory outside the repository; it holds
 * the bundled program, its package.json and its dependencies' licenses, no node_modules and nothing of
 * the build tooling; its source maps lead back to the repository's files; and the image's command line
 * (the Dockerfile's ENTRYPOINT, run with this Node, the real Node 24 of the workspace, and nothing of the
 * workspace around it) answers --version and --help, then starts against the test control plane with
 * leader election on (as the charts run it), serves /healthz and /readyz, and exits 0 on SIGTERM.
 */
import { workspaceControllers } from '@loopwright/cluster';
import { createTestNamespace, eventually, freeLoopbackPort, loadTestKubeConfig } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  buildBundle,
  bundleEntries,
  readPackageJson,
  runBundle,
  startBundle,
  type BundleProcess,
  type PackageJson,
} from './bundle.ts';
import { repoRoot } from './charts.ts';
import { setUpController } from './controller-setups.ts';
import { adminKubeconfigPath } from './kube.ts';

async function httpStatus(port: number, path: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  await response.body?.cancel();
  return response.status;
}

/** The Node the bundles run with: the workspace's (Node 24 on Linux x64), the test's own binary. */
const nodeVersion = process.version;

/** Packages a production bundle must never hold code of: the workspace's build, lint and test tooling. */
const DEV_ONLY = [
  'typescript',
  'eslint',
  'prettier',
  'nx',
  'typescript-eslint',
  'globals',
  'esbuild',
  'knip',
];
const DEV_ONLY_SCOPES = [
  '@loopwright/envtest',
  '@loopwright/fakes',
  '@loopwright/cluster',
  '@eslint/',
  '@typescript-eslint/',
  '@nx/',
  '@esbuild/',
];

async function readSourceMap(path: string): Promise<SourceMapPayload> {
  return JSON.parse(await readFile(path, 'utf8')) as SourceMapPayload;
}

/** The packages a source map's sources come from: `node_modules/.pnpm/x@1/node_modules/@a/b/...` is `@a/b`. */
function packagesOf(map: SourceMapPayload): Set<string> {
  const names = new Set<string>();
  for (const source of map.sources) {
    const name = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source)?.[1];
    if (name !== undefined) names.add(name);
  }
  return names;
}

/** The 0-based line and column where `text` first occurs in `code`. */
function positionOf(code: string, text: string): { line: number; column: number } {
  const index = code.indexOf(text);
  assert.notEqual(index, -1, `${text} is not in the code`);
  const before = code.slice(0, index).split('\n');
  return { line: before.length - 1, column: before.at(-1)?.length ?? 0 };
}

function describeBundle(controller: string): void {
  describe(`${controller}: the image's bundle, run with Node ${nodeVersion}`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    let bundleDir: string;
    let source: PackageJson;
    /** What the controller calls itself: the package name without its scope. */
    let shortName: string;
    let namespace: string;

    before(async () => {
      source = await readPackageJson(join(repoRoot, 'packages', controller));
      shortName = source.name.replace(/^@[^/]+\//, '');
      const workDir = await mkdtemp(join(tmpdir(), `loopwright-bundle-${controller}-`));
      cleanups.push(() => rm(workDir, { recursive: true, force: true }));
      bundleDir = join(workDir, 'app');
      await buildBundle(controller, bundleDir);
      const ns = await createTestNamespace(loadTestKubeConfig(), `bundle-${controller}`);
      cleanups.push(() => ns.cleanup());
      namespace = ns.name;
    });
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    });

    test('holds the bundled program, its package.json and licenses: no node_modules, no tooling', async () => {
      assert.deepEqual(await bundleEntries(bundleDir), [
        'THIRD-PARTY-LICENSES',
        'dist/',
        'dist/main.js',
        'dist/main.js.map',
        // Loaded on first use only (scripts/bundle.ts, lazyPackages).
        'dist/undici.cjs',
        'dist/undici.cjs.map',
        'package-lock.json',
        'package.json',
      ]);
      assert.deepEqual(await readPackageJson(bundleDir), {
        name: source.name,
        version: source.version,
        description: source.description,
        license: 'Apache-2.0',
        private: true,
        type: 'module',
      });
      const bundled = packagesOf(await readSourceMap(join(bundleDir, 'dist/main.js.map')));
      assert.ok(bundled.has('@kubernetes/client-node'), [...bundled].join(', '));
      const devOnly = [...bundled].filter(
        (name) => DEV_ONLY.includes(name) || DEV_ONLY_SCOPES.some((scope) => name.startsWith(scope)),
      );
      assert.deepEqual(devOnly, []);
    });

    test('THIRD-PARTY-LICENSES has the license of every package whose code is bundled', async () => {
      const licenses = await readFile(join(bundleDir, 'THIRD-PARTY-LICENSES'), 'utf8');
      const headed = new Set([...licenses.matchAll(/^(\S+) \S+ \(.*\)$/gm)].map((match) => match[1]));
      for (const map of ['dist/main.js.map', 'dist/undici.cjs.map'])
        for (const name of packagesOf(await readSourceMap(join(bundleDir, map))))
          assert.ok(headed.has(name), `${name} (in ${map}) has no license section`);
      assert.match(licenses, /^@kubernetes\/client-node \S+ \(Apache-2\.0\)\n\s+Apache License/m);
    });

    test('package-lock.json lists every package whose code is bundled, at the version installed (the SBOM reads it)', async () => {
      const lock = JSON.parse(await readFile(join(bundleDir, 'package-lock.json'), 'utf8')) as {
        name: string;
        version: string;
        lockfileVersion: number;
        packages: Record<string, { version?: string }>;
      };
      assert.equal(lock.lockfileVersion, 3);
      assert.deepEqual([lock.name, lock.version], [source.name, source.version]);
      const listed = new Map(
        Object.entries(lock.packages)
          .filter(([path]) => path !== '')
          .map(([path, entry]) => [path.slice(path.lastIndexOf('node_modules/') + 13), entry.version]),
      );
      // pnpm's store path names each bundled file's package and version: `.pnpm/<name>@<version>[_peers]/`.
      for (const map of ['dist/main.js.map', 'dist/undici.cjs.map'])
        for (const source of (await readSourceMap(join(bundleDir, map))).sources) {
          const match = /node_modules\/\.pnpm\/((?:@[^+/]+\+)?[^@/]+)@([^_/(]+)[^/]*\/node_modules\//.exec(
            source,
          );
          if (!match?.[1] || !match[2]) continue;
          const name = match[1].replace('+', '/');
          assert.equal(listed.get(name), match[2], `${name} (in ${map}) in package-lock.json`);
        }
    });

    test("the source maps lead to the repository's files", async () => {
      const payload = await readSourceMap(join(bundleDir, 'dist/main.js.map'));
      // The workspace's own files; a dependency's sources are whatever its published maps name.
      const ours = payload.sources.filter((path) => path.startsWith('packages/'));
      assert.ok(ours.includes('packages/runtime/src/cli/run-controller.ts'), ours.join(', '));
      for (const file of ours)
        await access(join(repoRoot, file)).catch(() => assert.fail(`${file}: not in the repository`));
      // Nothing names the build machine's directories: plugins' modules (`lazy:`) are placed alike.
      for (const file of payload.sources)
        assert.match(file, /^([a-z]+:)?(packages|node_modules)\/|^builtin:node:[a-z_/]+$/, file);
      // A log message of the runtime: the map places it at its line of run-controller.ts.
      const message = 'serving /healthz and /readyz (not ready) during start-up';
      const code = await readFile(join(bundleDir, 'dist/main.js'), 'utf8');
      const { line, column } = positionOf(code, message);
      const entry = new SourceMap(payload).findEntry(line, column);
      assert.ok('originalSource' in entry, 'no mapping');
      assert.equal(entry.originalSource, 'packages/runtime/src/cli/run-controller.ts');
      const original = await readFile(join(repoRoot, entry.originalSource), 'utf8');
      assert.match(
        original.split('\n')[entry.originalLine] ?? '',
        new RegExp(message.replace(/[()/]/g, '\\$&')),
      );
    });

    test('a package loaded on first use loads with Node alone', async () => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['-p', "typeof require('./dist/undici.cjs').Agent"],
        { cwd: bundleDir, env: { PATH: '/usr/bin:/bin' } },
      );
      assert.equal(stdout, 'function\n');
    });

    test('--version prints the name and the package version, exit 0', async () => {
      assert.deepEqual(await runBundle(controller, bundleDir, ['--version']), {
        code: 0,
        stdout: `${shortName} ${source.version}\n`,
        stderr: '',
      });
    });

    test('--help prints the usage and the flags with their variables, exit 0, without a cluster', async () => {
      const { code, stdout, stderr } = await runBundle(controller, bundleDir, ['--help']);
      assert.equal(code, 0, stderr);
      assert.equal(stderr, '');
      assert.ok(stdout.startsWith(`${shortName} ${source.version}: ${source.description}\n`), stdout);
      assert.match(stdout, /^ {2}--health-probe-bind-address \S+ {2}\(HEALTH_PROBE_BIND_ADDRESS\)$/m);
    });

    test('starts against the API server, answers /healthz and /readyz, exits 0 on SIGTERM', async (t) => {
      const { env, close } = await setUpController(controller, loadTestKubeConfig(), namespace);
      if (close) cleanups.push(close);
      const healthPort = await freeLoopbackPort();
      const bundle: BundleProcess = await startBundle(controller, bundleDir, {
        ...env,
        KUBECONFIG: adminKubeconfigPath(),
        HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${healthPort}`,
        METRICS_BIND_ADDRESS: '0',
        POD_NAME: `${controller}-bundle-test`,
        POD_NAMESPACE: namespace,
        LOG_FORMAT: 'json',
      });
      t.after(() => bundle.stop());
      const running = () => {
        const { exitCode, signalCode } = bundle.child;
        if (exitCode !== null || signalCode !== null)
          assert.fail(`exited (${exitCode ?? signalCode}):\n${bundle.output()}`);
      };
      await eventually(
        async () => {
          running();
          assert.equal(await httpStatus(healthPort, '/healthz'), 200);
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      // Ready: the informers listed and watched through the bundle's own Kubernetes client.
      await eventually(
        async () => {
          running();
          assert.equal(await httpStatus(healthPort, '/readyz'), 200);
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      assert.equal(await bundle.stop(), 0, bundle.output());
    });
  });
}

for (const { name } of workspaceControllers()) describeBundle(name);
