/**
 * What the generator's tests need of the repository in their in-memory workspaces: the library chart's
 * Chart.yaml, whose version the generated chart's dependency pins.
 */
import type { Tree } from '@nx/devkit';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const LIBRARY_CHART_YAML = 'charts/loopwright-controller/Chart.yaml';

/** The repository's charts/loopwright-controller/Chart.yaml. */
export const libraryChartYaml = readFileSync(
  fileURLToPath(new URL(`../../../../../${LIBRARY_CHART_YAML}`, import.meta.url)),
  'utf8',
);

/** Writes the repository's library Chart.yaml into `tree`, as a workspace has it; returns the tree. */
export function withLibraryChart(tree: Tree): Tree {
  tree.write(LIBRARY_CHART_YAML, libraryChartYaml);
  return tree;
}
