/**
 * The Grafana dashboards a chart ships: every file of charts/<chart>/dashboards/ (what the chart's
 * dashboards ConfigMap carries), with the parts of Grafana's JSON model that the tests read, and the
 * substitutions Grafana makes in a panel's query before sending it to Prometheus.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chartPath, type ChartName } from './charts.ts';

export interface DatasourceRef {
  type?: string;
  uid?: string;
}

export interface Target {
  refId?: string;
  datasource?: DatasourceRef;
  expr?: string;
}

export interface Panel {
  type: string;
  title: string;
  datasource?: DatasourceRef;
  targets?: Target[];
  /** A row's panels (a collapsed row keeps its panels here). */
  panels?: Panel[];
}

export interface TemplateVariable {
  name: string;
  type: string;
  query?: unknown;
  datasource?: DatasourceRef;
}

export interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: TemplateVariable[] };
}

/** The chart's dashboards, by file name, in file name order. */
export function chartDashboards(chart: ChartName): { file: string; dashboard: Dashboard }[] {
  const dir = join(chartPath(chart), 'dashboards');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(dir, file), 'utf8')) as Dashboard }));
}

/** Every panel that queries (rows are only headings), those inside rows included. */
export function queryPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((panel) =>
    panel.type === 'row' ? (panel.panels ?? []).filter((inner) => inner.type !== 'row') : [panel],
  );
}

/** A query variable's `label_values(<series selector>, <label>)`. */
export function labelValuesQuery(variable: TemplateVariable): { selector: string; label: string } {
  const query = typeof variable.query === 'string' ? variable.query : undefined;
  const match = query === undefined ? null : /^label_values\((.+),\s*([a-zA-Z_]\w*)\)$/.exec(query);
  if (!match?.[1] || !match[2])
    throw new Error(`variable ${variable.name}: not a label_values(<selector>, <label>) query`);
  return { selector: match[1], label: match[2] };
}

/**
 * `text` with Grafana's variables replaced by `values` (name -> value): `${name}` and `$name`; a name
 * without a value is left as it is, so Prometheus refuses the query rather than run another one.
 */
export function interpolate(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    return values[name] ?? whole;
  });
}

/**
 * The panels that only one way of running has series for: the leader's (leader election) and the
 * shard ring's (sharding). Every other query has series either way.
 */
export function queryMode(query: string): 'elected' | 'sharded' | undefined {
  if (query.includes('leader_election_')) return 'elected';
  if (query.includes('loopwright_shard_')) return 'sharded';
  return undefined;
}
