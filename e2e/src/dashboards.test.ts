/**
 * The dashboards every chart ships, as Grafana imports them (no node needed): their model, variables
 * and panels, and every metric a query names documented in a package README. Whether each query
 * returns series is the e2e suites' part (observability.ts).
 */
import { workspaceControllers } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './charts.ts';
import {
  chartDashboards,
  interpolate,
  labelValuesQuery,
  queryMode,
  queryPanels,
  type Dashboard,
  type Target,
  type TemplateVariable,
} from './dashboards.ts';

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
const SELECTS_RELEASE = ['job="$job"', 'namespace="$namespace"'];
const charts = workspaceControllers(repoRoot).map(({ name }) => name);

/** Each distinct dashboard once (the runtime's is the same file in every chart), with where it ships. */
function distinctDashboards(): { files: string[]; dashboard: Dashboard }[] {
  const byText = new Map<string, { files: string[]; dashboard: Dashboard }>();
  for (const chart of charts)
    for (const { file } of chartDashboards(chart)) {
      const path = `charts/${chart}/dashboards/${file}`;
      const text = readFileSync(join(repoRoot, path), 'utf8');
      const seen = byText.get(text);
      if (seen) seen.files.push(path);
      else byText.set(text, { files: [path], dashboard: JSON.parse(text) as Dashboard });
    }
  return [...byText.values()];
}

/**
 * The metric names an expression selects, each with the matchers of its `{...}` ('' without one):
 * every name that is not a function, keyword, label of a `by (...)` clause, number or string.
 */
function selectedMetrics(expr: string): { metric: string; matchers: string }[] {
  // Strings stand aside as "#<index>" while the rest is read, so that nothing in them reads as a name.
  const strings: string[] = [];
  const restore = (text: string) =>
    text.replace(/"#(\d+)"/g, (_, index: string) => strings[Number(index)] ?? '');
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, (string) => `"#${strings.push(string) - 1}"`)
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '');
  const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
  const selected: { metric: string; matchers: string }[] = [];
  const token = /(\d+(?:\.\d+)?(?:e[+-]?\d+)?)|([a-zA-Z_:][\w:]*)\s*(\(|\{[^}]*\})?/g;
  for (const [, number, name, after] of text.matchAll(token)) {
    if (number !== undefined || name === undefined || after === '(' || keywords.has(name.toLowerCase()))
      continue;
    selected.push({ metric: name, matchers: restore(after?.slice(1, -1) ?? '') });
  }
  return selected;
}

/** Every `name` written in backticks in a package README (a family, or one series with its labels). */
function documentedMetrics(): Set<string> {
  const names = new Set<string>();
  for (const dir of readdirSync(join(repoRoot, 'packages'))) {
    let readme: string;
    try {
      readme = readFileSync(join(repoRoot, 'packages', dir, 'README.md'), 'utf8');
    } catch {
      continue;
    }
    for (const [, name] of readme.matchAll(/`([a-z_:][a-z0-9_:]*)(?:\{[^`]*\})?`/g))
      if (name) names.add(name);
  }
  return names;
}

function targetsOf(dashboard: Dashboard): { where: string; target: Target }[] {
  return queryPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `${panel.title} (${target.refId})`, target })),
  );
}

describe('the dashboards the charts ship', () => {
  const dashboards = distinctDashboards();

  it('every controller chart ships the runtime dashboard, and may ship one of its own named after it', () => {
    for (const chart of charts) {
      // A generated chart starts with the runtime's only.
      const files = chartDashboards(chart).map(({ file }) => file);
      const own = files.filter((file) => file !== 'loopwright-runtime.json');
      assert.ok(files.includes('loopwright-runtime.json'), `${chart}: ${files.join(', ')}`);
      assert.ok(
        own.every((file) => file === `${chart}.json`),
        `${chart}: ${files.join(', ')}`,
      );
    }
  });

  it('import as they are: schemaVersion 39 or later, no __inputs, a uid of their own', () => {
    const uids = dashboards.map(({ dashboard }) => dashboard.uid);
    assert.equal(new Set(uids).size, uids.length, `uids: ${uids.join(', ')}`);
    for (const { files, dashboard } of dashboards) {
      assert.ok(dashboard.schemaVersion >= 39, `${files[0]}: schemaVersion ${dashboard.schemaVersion}`);
      assert.ok(!('__inputs' in dashboard), `${files[0]}: __inputs (an export for sharing externally)`);
      assert.match(dashboard.uid, /^[a-z0-9-]{1,40}$/, files[0]);
      assert.ok(dashboard.title, files[0]);
    }
  });

  it('have the datasource, namespace and job variables; job by namespace, from label_values', () => {
    for (const { files, dashboard } of dashboards) {
      const names = dashboard.templating.list.map((variable) => variable.name);
      assert.deepEqual(names, ['datasource', 'namespace', 'job'], files[0]);
      const [datasource, namespace, job] = dashboard.templating.list as [
        TemplateVariable,
        TemplateVariable,
        TemplateVariable,
      ];
      assert.deepEqual(
        { type: datasource.type, query: datasource.query },
        { type: 'datasource', query: 'prometheus' },
        files[0],
      );
      for (const variable of [namespace, job]) {
        assert.equal(variable.type, 'query', `${files[0]}: ${variable.name}`);
        assert.deepEqual(variable.datasource, DATASOURCE, `${files[0]}: ${variable.name}`);
      }
      assert.equal(labelValuesQuery(namespace).label, 'namespace', files[0]);
      const jobQuery = labelValuesQuery(job);
      assert.equal(jobQuery.label, 'job', files[0]);
      assert.match(jobQuery.selector, /\{namespace="\$namespace"\}$/, files[0]);
    }
  });

  it('every panel queries Prometheus through ${datasource}, and every query selects by $job and $namespace', () => {
    for (const { files, dashboard } of dashboards) {
      const ids = dashboard.panels.map((panel) => (panel as { id?: number }).id);
      assert.equal(new Set(ids).size, ids.length, `${files[0]}: panel ids ${ids.join(', ')}`);
      for (const panel of queryPanels(dashboard)) {
        const where = `${files[0]}: ${panel.title}`;
        assert.deepEqual(panel.datasource, DATASOURCE, where);
        assert.ok((panel.targets ?? []).length > 0, `${where}: no query`);
      }
      for (const { where, target } of targetsOf(dashboard)) {
        assert.deepEqual(target.datasource, DATASOURCE, `${files[0]}: ${where}`);
        const expr = target.expr ?? '';
        const metrics = selectedMetrics(expr);
        assert.ok(metrics.length > 0, `${files[0]}: ${where}: no metric in ${JSON.stringify(expr)}`);
        for (const { metric, matchers } of metrics)
          for (const matcher of SELECTS_RELEASE)
            assert.ok(matchers.includes(matcher), `${files[0]}: ${where}: ${metric} without ${matcher}`);
        // A counter's rate over Grafana's $__rate_interval: at least four scrapes, whatever the zoom.
        for (const [range] of expr.matchAll(/\b(?:rate|irate|increase)\([^[]*\[[^\]]*\]/g))
          assert.match(range, /\[\$__rate_interval\]$/, `${files[0]}: ${where}`);
      }
    }
  });

  it('every metric a query names is documented in a package README', () => {
    const documented = documentedMetrics();
    const missing = new Set<string>();
    for (const { files, dashboard } of dashboards)
      for (const { where, target } of targetsOf(dashboard))
        for (const { metric } of selectedMetrics(target.expr ?? '')) {
          // A histogram is documented as its family: `_bucket`, `_sum` and `_count` are its series.
          const family = metric.replace(/_(?:bucket|sum|count)$/, '');
          if (!documented.has(metric) && !documented.has(family))
            missing.add(`${files[0]}: ${where}: ${metric}`);
        }
    assert.deepEqual([...missing], []);
  });

  it("the runtime dashboard has panels of each way of running, and no query mixes the leader's and the ring's series", () => {
    const runtime = dashboards.find(({ files }) => files[0]?.endsWith('loopwright-runtime.json'));
    assert.ok(runtime);
    const modes = targetsOf(runtime.dashboard).map(({ target }) => queryMode(target.expr ?? ''));
    assert.ok(modes.includes('elected'), 'a leader election panel');
    assert.ok(modes.includes('sharded'), 'a sharding panel');
    assert.ok(modes.includes(undefined), 'panels for both');
    for (const { where, target } of targetsOf(runtime.dashboard)) {
      const expr = target.expr ?? '';
      assert.ok(!(expr.includes('leader_election_') && expr.includes('loopwright_shard_')), where);
    }
    assert.equal(queryMode('max by (pod) (leader_election_master_status{job="$job"})'), 'elected');
    assert.equal(queryMode('sum(loopwright_shard_owned_fraction{job="$job"})'), 'sharded');
    assert.equal(queryMode('sum(workqueue_depth{job="$job"})'), undefined);
  });

  it('reads the metrics and matchers of a query, and substitutes variables as Grafana does', () => {
    assert.deepEqual(
      selectedMetrics(
        'histogram_quantile(0.99, sum by (le, name) (rate(a_bucket{job="$job", x="rate(b)"}[$__rate_interval]))) / on (name) c or d{} > 1e-3',
      ),
      [
        { metric: 'a_bucket', matchers: 'job="$job", x="rate(b)"' },
        { metric: 'c', matchers: '' },
        { metric: 'd', matchers: '' },
      ],
    );
    assert.equal(
      interpolate('rate(x{job="$job", namespace="${namespace}"}[$__rate_interval]) $unknown', {
        job: 'ns/svc',
        namespace: 'ns',
        __rate_interval: '4s',
      }),
      'rate(x{job="ns/svc", namespace="ns"}[4s]) $unknown',
    );
  });
});
