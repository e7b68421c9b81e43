/**
 * The workspace's controllers, found rather than listed: a controller is a package `packages/<name>`
 * whose package.json carries the Nx tag `controller` (the one Dockerfile builds it), with `src/main.ts`,
 * `src/config.ts` (exporting `program`) and a chart `charts/<name>/` whose CRDs, if any, are
 * `crds/*.yaml`. Whatever does something per controller (images, bundles, e2e set-ups, the demo,
 * `pnpm generate`, CI's image matrix) asks here, so that a new controller made under these conventions
 * needs no list edited.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repositoryRoot } from './repository-root.ts';

/** The Nx tag that makes a workspace package a controller (`pnpm nx show projects --projects tag:controller`). */
const CONTROLLER_TAG = 'controller';

export interface WorkspaceController {
  /** The directory under packages/ and charts/: also the release, image and bundle name. */
  name: string;
  /** The package's name, e.g. `@loopwright/at-scheduler`. */
  packageName: string;
  packageDir: string;
  chartDir: string;
  /** `charts/<name>/crds/*.yaml`, sorted; empty for a controller of built-in kinds only. */
  crdFiles: string[];
}

interface PackageJson {
  name?: unknown;
  nx?: { tags?: unknown };
}

function readPackageJson(packageDir: string): PackageJson | undefined {
  const path = join(packageDir, 'package.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as PackageJson) : undefined;
}

/**
 * The `*.yaml` files of `dir` (absolute paths), sorted; none when `dir` does not exist. The same as
 * @loopwright/envtest's, kept here because this module runs on a bare Node without the workspace's
 * packages (scripts/controllers.ts, in the images workflow).
 */
function sortedYamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => join(dir, file));
}

/** Every controller of the workspace at `root` (absolute paths), sorted by name. */
export function workspaceControllers(root: string = repositoryRoot): WorkspaceController[] {
  const packagesDir = join(root, 'packages');
  const controllers: WorkspaceController[] = [];
  // Code-unit order, not the locale's: the same on every machine, as CI's matrix and the tests expect.
  for (const name of readdirSync(packagesDir).sort()) {
    const packageDir = join(packagesDir, name);
    const manifest = readPackageJson(packageDir);
    const tags = manifest?.nx?.tags;
    if (!Array.isArray(tags) || !tags.includes(CONTROLLER_TAG)) continue;
    if (typeof manifest?.name !== 'string') throw new Error(`packages/${name}/package.json: no name`);
    const chartDir = join(root, 'charts', name);
    controllers.push({
      name,
      packageName: manifest.name,
      packageDir,
      chartDir,
      crdFiles: sortedYamlFiles(join(chartDir, 'crds')),
    });
  }
  return controllers;
}

/**
 * A controller's option declarations: the `program` its `src/config.ts` exports (typed by the caller,
 * e.g. the runtime's `ProgramShape`). Importing the declarations starts nothing.
 */
export async function controllerProgram<Program>(
  controller: Pick<WorkspaceController, 'packageDir'>,
): Promise<Program> {
  const config = (await import(pathToFileURL(join(controller.packageDir, 'src', 'config.ts')).href)) as {
    program: Program;
  };
  return config.program;
}
