/**
 * What an operator's Grafana and Prometheus make of a release, on the e2e suite's real Prometheus
 * (node.ts: the release's pods found through its metrics Service and scraped every second): every
 * panel of every dashboard the chart ships returns series, and the chart's alerts load, evaluate
 * without error and stay quiet on this healthy run.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ChartName } from './charts.ts';
import {
  chartDashboards,
  interpolate,
  labelValuesQuery,
  queryMode,
  queryPanels,
  type Dashboard,
} from './dashboards.ts';
import { assertPodsScrapedByPrometheus } from './node.ts';
import type { Prometheus } from './prometheus.ts';
import { renderPrometheusRuleGroups, type RuleGroup } from './prometheus-rules.ts';

/**
 * Grafana's `$__rate_interval` on a data source whose scrape interval is this Prometheus's 1 s, at
 * the zoom where it is smallest: four scrapes.
 */
const RATE_INTERVAL = '4s';

type ScrapeOptions = Omit<
  Parameters<typeof assertPodsScrapedByPrometheus>[0],
  'rule_files' | 'whileScraping'
>;

/** A rule as Prometheus's `/api/v1/rules` reports it (the parts read here). */
interface LoadedRule {
  name: string;
  type: 'alerting' | 'recording';
  health: string;
  lastError?: string;
  lastEvaluation: string;
  state?: 'inactive' | 'pending' | 'firing';
  alerts?: { labels: Record<string, string>; value: string }[];
}

/**
 * `assertPodsScrapedByPrometheus` for the release `release` of `chart` (installed with the chart's
 * default alert thresholds), with the chart's rendered alert rules loaded; then, on that Prometheus,
 * the dashboards' queries and the alerts as the file's comment says. Failures name the dashboard and
 * panel, or the group and rule.
 */
export async function assertObservedByPrometheus(
  options: ScrapeOptions & { chart: ChartName; release: string },
): Promise<void> {
  const { chart, release, namespace } = options;
  // The rules as this release renders them: a sharded one's "no leader" alert watches the ring.
  const values = options.sharded ? { 'sharding.enabled': true, 'leaderElection.enabled': false } : undefined;
  const groups = await renderPrometheusRuleGroups(chart, {
    release,
    namespace,
    ...(values ? { values } : {}),
  });
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-e2e-rules-'));
  const rules = join(dir, 'rules.yml');
  await writeFile(rules, stringify({ groups }));
  try {
    await assertPodsScrapedByPrometheus({
      ...options,
      rule_files: [rules],
      whileScraping: async (prometheus, job) => {
        await assertPanelsHaveSeries(prometheus, chart, { namespace, job }, options.sharded === true);
        await assertAlertsEvaluateQuietly(prometheus, groups);
      },
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Every query of every panel of the chart's dashboards, with the variables set as a user would pick
 * them (each must offer the release's value), returns at least one series; waits for the scrapes
 * that `rate()` needs. The exception is the other mode's panels (see {@link queryMode}): they must
 * return none, so a leader-elected release exports no shard series and a sharded one no leader's.
 */
async function assertPanelsHaveSeries(
  prometheus: Prometheus,
  chart: ChartName,
  release: { namespace: string; job: string },
  sharded: boolean,
): Promise<void> {
  const mode = sharded ? 'sharded' : 'elected';
  const dashboards = chartDashboards(chart);
  await eventually(
    async () => {
      const failures: string[] = [];
      for (const { file, dashboard } of dashboards) {
        const values = await variableValues(prometheus, file, dashboard, release);
        if (typeof values === 'string') {
          failures.push(values);
          continue;
        }
        for (const panel of queryPanels(dashboard))
          for (const target of panel.targets ?? []) {
            const query = interpolate(target.expr ?? '', { ...values, __rate_interval: RATE_INTERVAL });
            const series = await instantQuery(prometheus, query);
            const expected = queryMode(query) ?? mode;
            if (expected === mode && series === 0)
              failures.push(`${file}: panel "${panel.title}" (${target.refId}): no series for ${query}`);
            if (expected !== mode && series > 0)
              failures.push(
                `${file}: panel "${panel.title}" (${target.refId}): ${series} series of a ${expected} release for ${query}`,
              );
          }
      }
      assert.deepEqual(failures, [], failures.join('\n'));
    },
    { timeoutMs: 60_000, intervalMs: 2000 },
  );
}

/**
 * The dashboard's `namespace` and `job` variables set to the release's, each after checking that its
 * `label_values` query offers it (the job's query filtered by the namespace picked); else what is wrong.
 */
async function variableValues(
  prometheus: Prometheus,
  file: string,
  dashboard: Dashboard,
  release: { namespace: string; job: string },
): Promise<Record<string, string> | string> {
  const values: Record<string, string> = {};
  for (const name of ['namespace', 'job'] as const) {
    const variable = dashboard.templating.list.find((candidate) => candidate.name === name);
    if (!variable) return `${file}: no variable ${name}`;
    const { selector, label } = labelValuesQuery(variable);
    const offered = await prometheus.get<string[]>(
      `/api/v1/label/${label}/values?match[]=${encodeURIComponent(interpolate(selector, values))}`,
    );
    if (!offered.includes(release[name]))
      return `${file}: variable ${name} offers ${JSON.stringify(offered)}, not ${release[name]}`;
    values[name] = release[name];
  }
  return values;
}

async function instantQuery(prometheus: Prometheus, query: string): Promise<number> {
  const { result } = await prometheus.get<{ result: unknown[] }>(
    `/api/v1/query?query=${encodeURIComponent(query)}`,
  );
  return result.length;
}

/**
 * Prometheus loaded exactly the chart's groups and rules; once each rule has been evaluated on the
 * series scraped so far (after the panels' check, so on data), every rule is healthy and no alert is
 * pending or firing.
 */
async function assertAlertsEvaluateQuietly(prometheus: Prometheus, groups: RuleGroup[]): Promise<void> {
  const since = Date.now();
  let loaded: { name: string; rules: LoadedRule[] }[] = [];
  await eventually(
    async () => {
      loaded = (await prometheus.get<{ groups: typeof loaded }>('/api/v1/rules')).groups;
      // The API lists a file's groups by name, not in the file's order.
      assert.deepEqual(
        loaded.map((group) => [group.name, group.rules.map((rule) => rule.name)]),
        groups
          .map((group) => [group.name, group.rules.map((rule) => rule.alert ?? rule.record)] as const)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        'the groups and rules Prometheus loaded',
      );
      for (const group of loaded)
        for (const rule of group.rules)
          assert.ok(
            Date.parse(rule.lastEvaluation) > since,
            `${group.name}/${rule.name}: not evaluated since ${new Date(since).toISOString()}`,
          );
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  const problems = loaded.flatMap((group) =>
    group.rules.flatMap((rule) => {
      const where = `${group.name}/${rule.name}`;
      const found: string[] = [];
      if (rule.health !== 'ok' || rule.lastError)
        found.push(`${where}: health ${rule.health}${rule.lastError ? `: ${rule.lastError}` : ''}`);
      if (rule.type === 'alerting' && rule.state !== 'inactive')
        found.push(`${where}: ${rule.state ?? 'no state'} ${JSON.stringify(rule.alerts ?? [])}`);
      return found;
    }),
  );
  assert.deepEqual(problems, [], problems.join('\n'));
}
