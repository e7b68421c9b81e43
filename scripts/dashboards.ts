/**
 * The runtime's Grafana dashboard has one source, packages/metrics/dashboards/loopwright-runtime.json,
 * and a copy in every controller chart (a chart ships only the files under its own directory) and in
 * the generator's chart template (so a generated chart ships it too). `pnpm generate` writes the
 * copies; `--check` writes nothing and exits 1 naming every copy that differs from the source
 * (dashboards.test.ts runs the same comparison in `pnpm test`).
 */
import { workspaceControllers } from '@loopwright/cluster';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './crd-types.ts';

const FILE = 'loopwright-runtime.json';
export const source = `packages/metrics/dashboards/${FILE}`;

/** Where the copies go (paths from the repository root): each controller chart's, then the generator's. */
function copies(root: string = repoRoot): string[] {
  return [
    ...workspaceControllers(root).map(({ chartDir }) => relative(root, join(chartDir, 'dashboards', FILE))),
    `packages/nx-plugin/src/generators/controller/files/chart/dashboards/${FILE}`,
  ];
}

/** The copies under `root` whose content is not the source's (missing ones included). */
export function driftedCopies(root: string = repoRoot): string[] {
  const expected = readFileSync(join(root, source), 'utf8');
  return copies(root).filter((copy) => {
    const path = join(root, copy);
    return !existsSync(path) || readFileSync(path, 'utf8') !== expected;
  });
}

/** `node --conditions=development scripts/dashboards.ts [--check]`. */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const drifted = driftedCopies();
    for (const copy of drifted) console.error(`${copy} differs from ${source}: run \`pnpm generate\``);
    process.exit(drifted.length === 0 ? 0 : 1);
  }
  const text = readFileSync(join(repoRoot, source), 'utf8');
  for (const copy of copies()) {
    mkdirSync(dirname(join(repoRoot, copy)), { recursive: true });
    writeFileSync(join(repoRoot, copy), text);
    console.log(`wrote ${copy} from ${source}`);
  }
}
