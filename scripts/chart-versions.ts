/**
 * `node scripts/chart-versions.ts --base <git ref>`: chart-testing's version rule. A chart whose files
 * under `charts/<chart>/` differ from the merge base with `<ref>` must also carry another `version` in
 * its Chart.yaml, or users who pinned the old version get different templates under the same number.
 * One line per chart that breaks the rule, exit 1; a chart new since the base passes. A library chart
 * (charts/loopwright-controller) changes what its dependents render without a change under their
 * directories, so each dependent must also pin the library's current version: bumping the library
 * then means editing, so bumping, every chart that takes it. Node's built-ins only: CI runs it without
 * an install.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/** The `version:` of a Chart.yaml (top level, quoted or not), or undefined. */
export function chartVersion(chartYaml: string): string | undefined {
  return /^version:\s*['"]?([^'"\s#]+)['"]?\s*(?:#.*)?$/m.exec(chartYaml)?.[1];
}

/** The dependencies of a Chart.yaml on charts of this repository (`repository: file://../<dir>`). */
export function localDependencies(chartYaml: string): { name: string; version: string; dir: string }[] {
  const block = /^dependencies:\n((?:[ \t-].*\n?|\n)*)/m.exec(chartYaml)?.[1] ?? '';
  return block
    .split(/^\s*-\s+/m)
    .map((entry) => {
      const field = (key: string) =>
        new RegExp(`^\\s*${key}:\\s*['"]?([^'"\\s#]+)['"]?`, 'm').exec(entry)?.[1];
      const dir = /^file:\/\/\.\.\/([^/]+)\/?$/.exec(field('repository') ?? '')?.[1];
      const name = field('name');
      const version = field('version');
      return name && version && dir ? { name, version, dir } : undefined;
    })
    .filter((dependency) => dependency !== undefined);
}

/** Charts whose file:// dependency on a chart here pins another version than that chart's own. */
export function staleLocalDependencies(root: string): string[] {
  const problems: string[] = [];
  for (const chart of readdirSync(join(root, 'charts')).sort()) {
    const chartYaml = join(root, 'charts', chart, 'Chart.yaml');
    if (!existsSync(chartYaml)) continue;
    for (const dependency of localDependencies(readFileSync(chartYaml, 'utf8'))) {
      const target = join(root, 'charts', dependency.dir, 'Chart.yaml');
      const current = existsSync(target) ? chartVersion(readFileSync(target, 'utf8')) : undefined;
      if (current !== dependency.version)
        problems.push(
          `charts/${chart}: depends on ${dependency.name} ${dependency.version}, but charts/${dependency.dir} is ${current ?? 'missing'}; pin it and bump charts/${chart}`,
        );
    }
  }
  return problems;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The charts changed since the merge base with `base` (committed or not) that kept their version. */
export function unbumpedCharts(root: string, base: string): string[] {
  const mergeBase = git(root, 'merge-base', 'HEAD', base).trim();
  const changed = git(root, 'diff', '--name-only', mergeBase, '--', 'charts/')
    .split('\n')
    .map((path) => /^charts\/([^/]+)\//.exec(path)?.[1])
    .filter((chart): chart is string => chart !== undefined);
  const problems: string[] = [];
  for (const chart of [...new Set(changed)].sort()) {
    const chartYaml = join(root, 'charts', chart, 'Chart.yaml');
    if (!existsSync(chartYaml)) continue; // removed
    let before: string;
    try {
      before = git(root, 'show', `${mergeBase}:charts/${chart}/Chart.yaml`);
    } catch {
      continue; // new since the base
    }
    const version = chartVersion(readFileSync(chartYaml, 'utf8'));
    if (version === undefined) problems.push(`charts/${chart}: Chart.yaml has no version`);
    else if (version === chartVersion(before))
      problems.push(`charts/${chart}: changed since ${base}, but its version is still ${version}; bump it`);
  }
  return problems;
}

function main(): void {
  const { values } = parseArgs({ options: { base: { type: 'string' } } });
  if (!values.base) {
    process.stderr.write('usage: node scripts/chart-versions.ts --base <git ref>\n');
    process.exit(2);
  }
  const root = git(process.cwd(), 'rev-parse', '--show-toplevel').trim();
  if (!existsSync(join(root, 'charts'))) return;
  const problems = [...staleLocalDependencies(root), ...unbumpedCharts(root, values.base)];
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) process.exit(1);
  const charts = readdirSync(join(root, 'charts')).length;
  process.stdout.write(`chart versions: ${charts} charts, none changed without a new version\n`);
}

if (import.meta.main) main();
