/**
 * `scripts/bundle.sh <controller> <outDir>` runs this: the controller's image contents, built by esbuild
 * from the workspace's TypeScript sources (the `development` condition, the code every test runs):
 *
 *   package.json               name, version, description (`--version`, `--help`), "type": "module"
 *   dist/main.js (+ .map)      the controller and everything it imports, one ES module for Node 24
 *   dist/<package>.cjs (+ .map) a dependency only some code paths need, loaded on first use (below)
 *   THIRD-PARTY-LICENSES       the license of every package the bundle holds code of
 *   package-lock.json          every npm package the bundle holds code of, with its version and license,
 *                              in npm's lockfile format (v3): SBOM tools (syft, the release's) read it,
 *                              as the image has no node_modules for them to find the packages in
 *
 * What shapes it, each measured by the footprint bench (e2e/bench/footprint.bench.ts):
 * - Minified: V8 keeps a module's whole source in memory to compile functions on first call, and the
 *   minified source is half as large; names are kept (`keepNames`) for error names and stack traces.
 * - The source maps name the repository's files (`packages/runtime/src/...`) and are not loaded by
 *   default: `--enable-source-maps` parses them at start-up, +30 MB of heap. A stack trace is mapped by
 *   running the bundle with NODE_OPTIONS=--enable-source-maps, or offline with the map.
 * - Node's built-in modules are `require`d, never `import`ed: an ES import builds the module's ES facade,
 *   which reads every export, and node:http's lazy `WebSocket` export then loads Node's own copy of
 *   undici (35 ms and 0.7 MB of source, at every start and `--help`).
 * - @kubernetes/client-node declares no "sideEffects" in its package.json, yet its modules have none:
 *   declared here, its index stops pulling in what Loopwright never imports (exec, attach, cp, watch,
 *   the generated models and APIs, and with them ws, tar-fs, jsonpath-plus...).
 * - {@link lazyPackages}: CommonJS dependencies that a module we need imports at its top level for code
 *   paths we do not take. Each is bundled into a file of its own, and its importers get an object whose
 *   getters require that file on first use: the same exports, evaluated only if ever used.
 */
import * as esbuild from 'esbuild';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * undici (0.7 MB minified, 42 % of at-scheduler's bundle before): client-node's KubeConfig imports it
 * for its fetch-based requests, which Loopwright's transport never makes (it uses node:https and
 * `applyToHTTPSOptions`). Evaluating it anyway costs 8 MB of idle RSS.
 */
const lazyPackages = ['undici'];

/** Packages whose modules have no side effects although their package.json does not say so. */
const sideEffectFreePackages = ['@kubernetes/client-node'];

/**
 * Makes `require` exist in the ES module: esbuild turns a bundled CommonJS module's require of a
 * built-in (or of a {@link lazyPackages} file) into a call of it.
 */
const requireBanner =
  "import { createRequire as __loopwrightCreateRequire } from 'node:module'; const require = __loopwrightCreateRequire(import.meta.url);";

class UsageError extends Error {}

interface PackageManifest {
  name?: string;
  version?: string;
  description?: string;
  license?: string;
}

async function readManifest(dir: string): Promise<PackageManifest> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageManifest;
}

/** `<outDir>` must not exist or be empty: nothing of an earlier bundle may end up in the image. */
async function prepareOutDir(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const entries = await readdir(outDir);
  if (entries.length > 0) throw new UsageError(`${outDir} is not empty`);
}

/** Built-in modules, whichever way they are named (`fs`, `node:fs`, `fs/promises`, `node:sqlite`). */
const builtins = new Set(builtinModules.map((name) => name.replace(/^node:/, '')));

const requireBuiltins: esbuild.Plugin = {
  name: 'require-builtins',
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (args.kind !== 'import-statement' || !builtins.has(name)) return undefined;
      return { path: `node:${name}`, namespace: 'builtin' };
    });
    build.onResolve({ filter: /.*/, namespace: 'builtin' }, (args) => ({ path: args.path, external: true }));
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/** Marks a plugin's own call of esbuild's resolver, so the plugins below do not handle an import twice. */
const resolving = Symbol('resolving');

function resolveAsEsbuildWould(build: esbuild.PluginBuild, args: esbuild.OnResolveArgs) {
  const { importer, namespace, resolveDir, kind, with: attributes } = args;
  return build.resolve(args.path, {
    importer,
    namespace,
    resolveDir,
    kind,
    with: attributes,
    pluginData: resolving,
  });
}

function packagePattern(names: readonly string[]): RegExp {
  return new RegExp(`^(${names.map((name) => name.replace(/[/.]/g, '\\$&')).join('|')})(/|$)`);
}

const sideEffectFree: esbuild.Plugin = {
  name: 'side-effect-free',
  setup(build) {
    const inPackage = new RegExp(
      `/node_modules/(${sideEffectFreePackages.map((name) => name.replace(/[/.]/g, '\\$&')).join('|')})/`,
    );
    // The package's own entry, resolved as esbuild would.
    build.onResolve({ filter: packagePattern(sideEffectFreePackages) }, async (args) => {
      if (args.pluginData === resolving) return undefined;
      const resolved = await resolveAsEsbuildWould(build, args);
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      return { ...resolved, sideEffects: false };
    });
    // Its modules' imports of each other: relative paths naming the file, as ES modules must.
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (!inPackage.test(args.importer)) return undefined;
      return { path: resolve(args.resolveDir, args.path), sideEffects: false };
    });
  },
};

/** The file a lazy package is bundled into, next to main.js. */
function lazyFileName(name: string): string {
  return `${name.replace('/', '+')}.cjs`;
}

function isModuleNamespace(value: object): boolean {
  return Object.prototype.toString.call(value) === '[object Module]';
}

/** The lazy-loading plugin, and the entry file of each lazy package it met (to be bundled on its own). */
function lazyLoad(): { plugin: esbuild.Plugin; met: Map<string, string> } {
  const met = new Map<string, string>();
  const plugin: esbuild.Plugin = {
    name: 'lazy-packages',
    setup(build) {
      build.onResolve({ filter: packagePattern(lazyPackages) }, async (args) => {
        if (args.pluginData === resolving) return undefined;
        if (!lazyPackages.includes(args.path))
          return { errors: [{ text: `${args.path}: only a lazy package's main export can be imported` }] };
        const resolved = await resolveAsEsbuildWould(build, args);
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        met.set(args.path, resolved.path);
        return { path: resolved.path, namespace: 'lazy', pluginData: args.path };
      });
      build.onResolve({ filter: /.*/, namespace: 'lazy' }, (args) => ({ path: args.path, external: true }));
      build.onLoad({ filter: /.*/, namespace: 'lazy' }, (args) => {
        const name = args.pluginData as string;
        // Its export names, read by loading it here, at build time: the getters must exist before any use.
        // Only an object of exports can stand in for the module: a callable one (`module.exports = fn`)
        // or an ES module (whose default export an importer would get wrong) cannot.
        const exported: unknown = createRequire(args.path)(args.path);
        if (typeof exported !== 'object' || exported === null || isModuleNamespace(exported))
          return { errors: [{ text: `${name}: not a CommonJS module exporting an object, cannot be lazy` }] };
        const names = Object.getOwnPropertyNames(exported);
        return {
          contents: [
            'let loaded;',
            `const load = () => (loaded ??= require(${JSON.stringify(`./${lazyFileName(name)}`)}));`,
            `for (const name of ${JSON.stringify(names)})`,
            '  Object.defineProperty(exports, name, { enumerable: true, get: () => load()[name] });',
          ].join('\n'),
          loader: 'js',
        };
      });
    },
  };
  return { plugin, met };
}

const common = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  minify: true,
  keepNames: true,
  sourcemap: 'external',
  // The repository at the image's commit has them; without, a map is a third of the size.
  sourcesContent: false,
  // Licenses go to THIRD-PARTY-LICENSES whole; a comment in the code would also make V8 hold the source
  // as two bytes per character wherever it is not ASCII.
  legalComments: 'none',
  absWorkingDir: repoRoot,
  metafile: true,
  logLevel: 'warning',
} satisfies esbuild.BuildOptions;

/** A plugin's module (`builtin:node:http`, `lazy:/.../undici/index.js`) rather than a file. */
const virtualModule = /^[a-z-]+:/;

/**
 * The map's sources as repository paths: esbuild writes files relative to the output directory, and a
 * plugin's module with its absolute path (which would name the build machine's directories).
 */
async function rewriteSourceMap(mapPath: string): Promise<void> {
  const map = JSON.parse(await readFile(mapPath, 'utf8')) as { sources: string[] };
  map.sources = map.sources.map((source) => {
    const namespace = virtualModule.exec(source)?.[0];
    if (namespace === undefined) return relative(repoRoot, resolve(dirname(mapPath), source));
    const path = source.slice(namespace.length);
    return isAbsolute(path) ? `${namespace}${relative(repoRoot, path)}` : source;
  });
  await writeFile(mapPath, JSON.stringify(map));
}

/** The directory of the package that `input` (a path esbuild reports) belongs to, if a dependency. */
function packageDirOf(input: string): string | undefined {
  const match = /^(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  return match?.[1];
}

async function licenseText(dir: string): Promise<string | undefined> {
  const file = (await readdir(dir)).find((entry) => /^(licen[cs]e|copying)(\.|$)/i.test(entry));
  return file === undefined ? undefined : readFile(join(dir, file), 'utf8');
}

/** The directory of every dependency (not workspace) package the bundle holds code of. */
function bundledPackageDirs(metafiles: readonly esbuild.Metafile[]): string[] {
  const dirs = new Set<string>();
  for (const metafile of metafiles)
    for (const input of Object.keys(metafile.inputs)) {
      const dir = virtualModule.test(input) ? undefined : packageDirOf(input);
      if (dir) dirs.add(resolve(repoRoot, dir));
    }
  return [...dirs];
}

/** Every bundled dependency's name, version, license and license text, as its package ships them. */
async function thirdPartyLicenses(dirs: readonly string[]): Promise<string> {
  const sections: { name: string; text: string }[] = [];
  for (const dir of dirs) {
    const { name = basename(dir), version = '', license = 'UNKNOWN' } = await readManifest(dir);
    const text = (await licenseText(dir)) ?? `(no license file; package.json says: ${license})`;
    sections.push({ name, text: `${name} ${version} (${license})\n\n${text.trim()}\n` });
  }
  sections.sort((a, b) => a.name.localeCompare(b.name));
  return sections.map((section) => section.text).join(`\n${'-'.repeat(80)}\n\n`);
}

/**
 * npm's lockfile (v3) of what the bundle holds: the controller as its root and one entry per bundled
 * dependency, by the path npm would install it at. The same package at two versions keeps both (the
 * second nested under the first's path is not where npm would put it, but the entry still names it).
 */
async function bundledPackagesLock(root: PackageManifest, dirs: readonly string[]): Promise<string> {
  const packages: Record<string, { version?: string; license?: string }> = {
    '': { version: root.version, license: root.license },
  };
  const manifests = await Promise.all(dirs.map(async (dir) => ({ dir, manifest: await readManifest(dir) })));
  manifests.sort((a, b) => (a.manifest.name ?? '').localeCompare(b.manifest.name ?? ''));
  for (const { dir, manifest } of manifests) {
    const name = manifest.name ?? basename(dir);
    let path = `node_modules/${name}`;
    while (path in packages) path = `${path}/node_modules/${name}`;
    packages[path] = { version: manifest.version, license: manifest.license };
  }
  const lock = { name: root.name, version: root.version, lockfileVersion: 3, requires: true, packages };
  return `${JSON.stringify(lock, null, 2)}\n`;
}

/**
 * Bundles `entry` (default: the controller's src/main.ts) as the controller's image has it. Another entry
 * is for a bench that must run the controller as the image does: at-scheduler's runs its controller phase
 * from bench/controller-process.ts bundled so.
 */
async function bundle(controller: string, outDir: string, entry?: string): Promise<void> {
  const packageDir = join(repoRoot, 'packages', controller);
  await prepareOutDir(outDir);
  const distDir = join(outDir, 'dist');
  const lazy = lazyLoad();
  const main = await esbuild.build({
    ...common,
    entryPoints: [entry === undefined ? join(packageDir, 'src/main.ts') : resolve(entry)],
    outfile: join(distDir, 'main.js'),
    format: 'esm',
    conditions: ['development'],
    banner: { js: requireBanner },
    plugins: [requireBuiltins, lazy.plugin, sideEffectFree],
  });
  const metafiles = [main.metafile];
  for (const [name, entry] of lazy.met) {
    const built = await esbuild.build({
      ...common,
      entryPoints: [entry],
      outfile: join(distDir, lazyFileName(name)),
      format: 'cjs',
    });
    // A module in both files would be two instances (two registries, two classes): lazy packages must
    // share no dependency with the rest.
    const shared = Object.keys(built.metafile.inputs).filter((input) => input in main.metafile.inputs);
    if (shared.length > 0) throw new Error(`${name} shares modules with main.js: ${shared.join(', ')}`);
    metafiles.push(built.metafile);
  }
  for (const file of await readdir(distDir))
    if (file.endsWith('.map')) await rewriteSourceMap(join(distDir, file));

  const { name, version, description, license } = await readManifest(packageDir);
  const manifest = { name, version, description, license, private: true, type: 'module' };
  await writeFile(join(outDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const dependencies = bundledPackageDirs(metafiles);
  await writeFile(join(outDir, 'THIRD-PARTY-LICENSES'), await thirdPartyLicenses(dependencies));
  await writeFile(join(outDir, 'package-lock.json'), await bundledPackagesLock(manifest, dependencies));
}

const [controller, outDir, entryFlag, entry, ...extra] = process.argv.slice(2);
if (
  controller === undefined ||
  outDir === undefined ||
  (entryFlag !== undefined && (entryFlag !== '--entry' || entry === undefined)) ||
  extra.length > 0
) {
  process.stderr.write(
    'usage: scripts/bundle.ts <controller> <outDir> [--entry <file instead of src/main.ts>]\n',
  );
  process.exit(2);
}
try {
  await bundle(controller, resolve(outDir), entry);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`scripts/bundle.sh: ${error.message}\n`);
  process.exit(2);
}
