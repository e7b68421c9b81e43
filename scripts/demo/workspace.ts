/**
 * The controllers the demo runs: every controller of the workspace (`workspaceControllers()`), with what
 * the demo needs of each: whether its program is namespaced (it then watches only the demo's namespace,
 * read from its `src/config.ts`) and its CRDs. The three of {@link SCENARIOS} have sample objects and
 * checks of their own; any other controller runs the same way, with its `packages/<name>/samples/*.yaml`.
 */
import type { ProgramShape } from '@loopwright/runtime';
import { controllerProgram, workspaceControllers } from '@loopwright/cluster';
import { repoRoot } from './repo.ts';

export interface DemoController {
  name: string;
  namespaced: boolean;
  packageDir: string;
  /** Its chart's CRD files, sorted. */
  crdFiles: readonly string[];
}

/** The controllers whose samples and checks the demo spells out (samples.ts, rows.ts, main.ts). */
export const SCENARIOS: readonly string[] = ['at-scheduler', 'mailgun-cluster', 'cloud-node'];

/** Sorted by name: the order the demo starts, installs and lists them in. */
export const CONTROLLERS: readonly DemoController[] = await Promise.all(
  workspaceControllers(repoRoot).map(async (controller) => ({
    name: controller.name,
    namespaced: (await controllerProgram<ProgramShape>(controller)).namespaced,
    packageDir: controller.packageDir,
    crdFiles: controller.crdFiles,
  })),
);
