/**
 * `pnpm nx g @loopwright/nx-plugin:controller <name> --group <g> --kind <Kind> [--api-version <v>]
 * [--cluster-scoped] [--owns Pod,...]`: a new controller in the workspace's dialect: packages/<name>,
 * charts/<name> and its e2e suite, from the templates under files/ (files/package -> packages/<name>,
 * files/chart -> charts/<name>, files/e2e -> e2e). Nothing else names the controllers: the workspace
 * finds it by its package's `controller` tag.
 *
 * Nx loads this file with Node's own type stripping (no build step, no transpiler).
 */
import { formatFiles, generateFiles, updateJson, type GeneratorCallback, type Tree } from '@nx/devkit';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { InvalidOptionError, templateVariables, type ControllerOptions } from './names.ts';

const FILES = join(import.meta.dirname, 'files');

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
  const variables = templateVariables(options);
  const { name } = variables;
  for (const taken of [`packages/${name}`, `charts/${name}`])
    if (tree.exists(taken)) throw new InvalidOptionError(`name: ${taken} already exists; pick another name`);

  for (const { from, to } of destinations(name)) generateFiles(tree, join(FILES, from), to, variables);
  addProjectReference(tree, `packages/${name}/tsconfig.build.json`);
  await formatFiles(tree);

  // After Nx has written the files: link the new package, then generate what is derived from them
  // (the CRD's TypeScript types, the README's options table). The new package changes the lockfile,
  // which pnpm would refuse to do under CI=true (a frozen lockfile by default there).
  return () => {
    run(tree.root, 'pnpm', ['install', '--prefer-offline', '--no-frozen-lockfile']);
    run(tree.root, 'pnpm', ['generate']);
  };
}

/** `tsc -b` at the root builds every package through the root tsconfig.json's references. */
function addProjectReference(tree: Tree, path: string): void {
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
