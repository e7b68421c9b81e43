/**
 * `pnpm nx g @loopwright/nx-plugin:controller <name> --group <g> --kind <Kind> [--api-version <v>]
 * [--cluster-scoped] [--owns Pod,...] [--skip-install]`: a new controller in the workspace's dialect:
 * packages/<name>, charts/<name> and its e2e suite, from the templates under files/ (files/package ->
 * packages/<name>, files/chart -> charts/<name>, files/e2e -> e2e). Nothing else names the controllers:
 * the workspace finds it by its package's `controller` tag.
 *
 * Only what is the controller's own is generated: its chart has its CRD, RBAC rules, values and NOTES,
 * and takes every other object from the library chart charts/loopwright-controller (a dependency of the
 * library's current version, through the symlink charts/<name>/charts/loopwright-controller); its chart
 * test registers the shared contract suite (e2e/src/chart-contract.ts) with its expectations.
 *
 * Nx loads this file with Node's own type stripping (no build step, no transpiler).
 */
import {
  formatFiles,
  generateFiles,
  getProjects,
  updateJson,
  type GeneratorCallback,
  type Tree,
} from '@nx/devkit';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { templateCodeIdentifiers, templatesIdentifiers } from './identifiers.ts';
import {
  InvalidOptionError,
  templateVariables,
  type ControllerOptions,
  type TemplateNames,
} from './names.ts';
import { withReference } from './tsconfig-references.ts';

const FILES = join(import.meta.dirname, 'files');
/** The library chart every controller chart depends on, and where a chart links it (relative to it). */
const LIBRARY_CHART = 'charts/loopwright-controller';
const LIBRARY_LINK = { path: 'charts/loopwright-controller', target: '../../loopwright-controller' };

/** The workspace's library chart version, which the new chart's dependency pins. */
function libraryChartVersion(tree: Tree): string {
  const chart = tree.read(`${LIBRARY_CHART}/Chart.yaml`, 'utf-8');
  if (chart === null)
    throw new Error(
      `${LIBRARY_CHART}/Chart.yaml is missing: a controller chart takes its Deployment, RBAC and Service from that library chart`,
    );
  // Chart.yaml's top-level `version:` (a SemVer, maybe quoted); nested keys are indented.
  const version = /^version:[ \t]*['"]?([^'"\s#]+)/m.exec(chart)?.[1];
  if (version === undefined) throw new Error(`${LIBRARY_CHART}/Chart.yaml has no version`);
  return version;
}

/** The names the templates use, and those the generated package exports, read from the templates. */
function templateNames(): TemplateNames {
  const exported = templateCodeIdentifiers(
    readFileSync(join(FILES, 'package/src/index.ts.template'), 'utf8'),
  );
  return {
    used: new Set(templatesIdentifiers(FILES)),
    // Those a kind could be named (PascalCase): `StatusPatch`, not `CONTROLLER_NAME`.
    exported: new Set([...exported].filter((identifier) => /^[A-Z][A-Za-z0-9]*$/.test(identifier))),
  };
}

/** Template directory -> where it lands, for a controller named `name`. */
function destinations(name: string): readonly { from: string; to: string }[] {
  return [
    { from: 'package', to: `packages/${name}` },
    { from: 'chart', to: `charts/${name}` },
    { from: 'e2e', to: 'e2e' },
  ];
}

export default async function controllerGenerator(
  tree: Tree,
  options: ControllerOptions,
): Promise<GeneratorCallback> {
  const variables = templateVariables(options, templateNames());
  const { name, packageName } = variables;
  for (const taken of [`packages/${name}`, `charts/${name}`])
    if (tree.exists(taken)) throw new InvalidOptionError(`name: ${taken} already exists; pick another name`);
  // A second project of the same name stops every Nx command ("defined in multiple locations").
  const project = getProjects(tree).get(packageName);
  if (project)
    throw new InvalidOptionError(
      `name: ${packageName} is already the workspace project in ${project.root || '.'}; pick another name`,
    );
  if (tree.exists(name))
    throw new InvalidOptionError(`name: ${name} already exists at the workspace root; pick another name`);

  const templateValues = { ...variables, libraryChartVersion: libraryChartVersion(tree) };
  for (const { from, to } of destinations(name)) generateFiles(tree, join(FILES, from), to, templateValues);
  addProjectReference(tree, `packages/${name}/tsconfig.build.json`);
  await formatFiles(tree);

  // After Nx has written the files: link the library chart into the new chart (Nx's Tree writes no
  // symlink), link the new package, then generate what is derived from the files (the CRD's TypeScript
  // types, the README's options table). The new package changes the lockfile, which pnpm would refuse
  // to do under CI=true (a frozen lockfile by default there).
  return () => {
    linkLibraryChart(join(tree.root, 'charts', name));
    if (options.skipInstall) return;
    run(tree.root, 'pnpm', ['install', '--prefer-offline', '--no-frozen-lockfile']);
    run(tree.root, 'pnpm', ['generate']);
  };
}

/**
 * charts/<name>/charts/loopwright-controller -> ../../loopwright-controller, as the other charts have
 * it committed: `helm template charts/<name>` then works from a checkout, without `helm dependency build`.
 */
function linkLibraryChart(chartDir: string): void {
  const path = join(chartDir, LIBRARY_LINK.path);
  mkdirSync(dirname(path), { recursive: true });
  // Run again (the callback after a retried install): a link already there, to the library, is kept.
  const existing = readLinkOrUndefined(path);
  if (existing === LIBRARY_LINK.target) return;
  if (existing !== undefined || existsSync(path))
    throw new Error(
      `${path} exists and is not a link to ${LIBRARY_LINK.target}; remove it and generate again`,
    );
  symlinkSync(LIBRARY_LINK.target, path);
}

function readLinkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * `tsc -b` at the root builds every package through the root tsconfig.json's references. One line is
 * added after the last reference, as the others are written; a file laid out otherwise is rewritten.
 */
function addProjectReference(tree: Tree, path: string): void {
  const text = tree.read('tsconfig.json', 'utf-8') ?? '{}';
  const edited = withReference(text, path);
  if (edited !== undefined) tree.write('tsconfig.json', edited);
  else
    updateJson<{ references?: { path: string }[] }>(tree, 'tsconfig.json', (tsconfig) => ({
      ...tsconfig,
      references: [...(tsconfig.references ?? []), { path }],
    }));
}

function run(cwd: string, command: string, args: string[]): void {
  const { status, error } = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (error) throw error;
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${status}`);
}
