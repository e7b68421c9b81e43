/**
 * A chart's alerts as Prometheus loads them: the `spec.groups` of the PrometheusRule the chart renders
 * with `prometheusRule.enabled=true`, which is a plain rule file's `groups:` list.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { chartPath, one, render, type ChartName } from './charts.ts';
import { promtoolBinary } from './prometheus.ts';

const run = promisify(execFile);

/** A Prometheus rule group (the parts the tests read; the rest is passed through as rendered). */
export interface RuleGroup {
  name: string;
  rules: { alert?: string; record?: string; expr: string; [key: string]: unknown }[];
}

export interface RuleRenderOptions {
  /** The release the rules select (its pods are `<fullname>-<hash>-<suffix>`); default `rel`. */
  release?: string;
  /** The release's namespace; default `controllers`. */
  namespace?: string;
  /** More `--set-json` values, e.g. thresholds or `fullnameOverride`. */
  values?: Record<string, unknown>;
}

/**
 * What every chart's render needs: its required values (ci/*-values.yaml, when it has any), and the
 * Cluster API the charts of Cluster API providers refuse to render without (the others ignore it).
 */
function requiredRenderOptions(chart: ChartName) {
  const ci = join(chartPath(chart), 'ci');
  const valuesFiles = existsSync(ci)
    ? readdirSync(ci)
        .filter((file) => file.endsWith('-values.yaml'))
        .map((file) => join(ci, file))
    : [];
  return { valuesFiles, apiVersions: ['cluster.x-k8s.io/v1beta2'] };
}

/** Renders charts/<chart> with its PrometheusRule on and returns that rule's `spec.groups`. */
export async function renderPrometheusRuleGroups(
  chart: ChartName,
  options: RuleRenderOptions = {},
): Promise<RuleGroup[]> {
  const manifests = await render(chart, {
    ...requiredRenderOptions(chart),
    release: options.release,
    namespace: options.namespace,
    skipTests: true,
    values: { ...options.values, 'prometheusRule.enabled': true },
  });
  return (one(manifests, 'PrometheusRule').spec as { groups: RuleGroup[] }).groups;
}

/** The names of the alerts of these groups, in order. */
export function alertNames(groups: RuleGroup[]): string[] {
  return groups.flatMap((group) => group.rules.flatMap((rule) => (rule.alert ? [rule.alert] : [])));
}

/** `promtool check rules` on these groups (syntax, PromQL, templates); rejects with promtool's output. */
export async function promtoolCheckRules(groups: RuleGroup[]): Promise<void> {
  await inRulesDir(groups, [], (dir) => promtool(['check', 'rules', 'rules.yaml'], dir));
}

/**
 * `promtool check rules` on these groups, then `promtool test rules` on these unit test files
 * (e2e/alerts/*.test.yaml, which load `rule_files: [rules.yaml]`). Rejects with promtool's output.
 */
export async function promtoolTestRules(groups: RuleGroup[], testFiles: string[]): Promise<void> {
  await inRulesDir(groups, testFiles, async (dir) => {
    await promtool(['check', 'rules', 'rules.yaml'], dir);
    await promtool(['test', 'rules', ...testFiles.map((file) => basename(file))], dir);
  });
}

/** Runs `use` in a temporary directory holding the groups as rules.yaml beside copies of the files. */
async function inRulesDir(groups: RuleGroup[], files: string[], use: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-alerts-'));
  try {
    await writeFile(join(dir, 'rules.yaml'), stringify({ groups }));
    for (const file of files) await copyFile(file, join(dir, basename(file)));
    await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function promtool(args: string[], cwd: string): Promise<void> {
  try {
    await run(promtoolBinary, args, { cwd });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}
