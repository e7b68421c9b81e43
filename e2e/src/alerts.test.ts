/**
 * Every controller chart's alerts, as its PrometheusRule renders them, under `promtool check rules` and
 * `promtool test rules` (Debian's promtool 2.42; the node's Prometheus is 3.14, so the expressions keep
 * to PromQL both accept): the runtime alerts by e2e/alerts/runtime.test.yaml, the controller's own by
 * e2e/alerts/<chart>.test.yaml. Each alert must fire in a case of its own, with exact labels and
 * annotations, and stay silent in the file's `healthy` run; an alert without both cannot ship.
 */
import { workspaceControllers } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { alertNames, promtoolTestRules, renderPrometheusRuleGroups } from './prometheus-rules.ts';

const alertsDir = fileURLToPath(new URL('../alerts/', import.meta.url));
const testFile = (name: string) => `${alertsDir}${name}.test.yaml`;

// One release name for every chart, so the runtime alerts' texts are the same in each render and one
// test file serves them all.
const values = { fullnameOverride: 'loopwright' };

interface PromtoolTestFile {
  tests: {
    name: string;
    alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
  }[];
}

/** The alerts a test file makes fire, and those its `healthy` run expects silent. */
function casesOf(file: string) {
  const { tests } = parse(readFileSync(file, 'utf8')) as PromtoolTestFile;
  const firing = new Set<string>();
  const silentWhenHealthy = new Set<string>();
  const named = new Set<string>();
  for (const { name, alert_rule_test: cases = [] } of tests)
    for (const { alertname, exp_alerts: expected = [] } of cases) {
      named.add(alertname);
      if (expected.length > 0) firing.add(alertname);
      else if (name === 'healthy') silentWhenHealthy.add(alertname);
    }
  return { firing, silentWhenHealthy, named };
}

for (const { name: chart } of workspaceControllers())
  describe(`${chart} chart: alerts`, () => {
    const ownTests = testFile(chart);
    const testFiles = [testFile('runtime'), ...(existsSync(ownTests) ? [ownTests] : [])];

    test('promtool check rules accepts the groups, and promtool test rules passes', async () => {
      await promtoolTestRules(await renderPrometheusRuleGroups(chart, { values }), testFiles);
    });

    test('every alert fires in a test case and stays silent in the healthy run; every case names an alert', async () => {
      const groups = await renderPrometheusRuleGroups(chart, { values });
      if (groups.length > 1) assert.ok(existsSync(ownTests), `the chart's own alerts need ${ownTests}`);
      const alerts = alertNames(groups);
      const cases = testFiles.map(casesOf);
      const untested = alerts.filter((alert) => !cases.some(({ firing }) => firing.has(alert)));
      assert.deepEqual(untested, [], 'alerts that no test case makes fire');
      const unchecked = alerts.filter((alert) => !cases.some((c) => c.silentWhenHealthy.has(alert)));
      assert.deepEqual(unchecked, [], 'alerts that no healthy run expects silent');
      // A case naming no rendered alert passes whatever it expects to be silent: a typo or a renamed alert.
      const unknown = cases.flatMap(({ named }) => [...named].filter((alert) => !alerts.includes(alert)));
      assert.deepEqual(unknown, [], 'test cases of alerts the chart does not render');
    });
  });

describe('alerts without leader election', () => {
  test('LoopwrightNoLeader fires when the one replica is not up (there is no Lease to hold)', async () => {
    const groups = await renderPrometheusRuleGroups('at-scheduler', {
      values: { ...values, 'leaderElection.enabled': false, replicaCount: 1 },
    });
    await promtoolTestRules(groups, [testFile('runtime-without-leader-election')]);
  });
});

describe('alerts of a sharded release', () => {
  test('LoopwrightNoLeader fires when the replicas hold less than the whole hash space', async () => {
    for (const chart of ['at-scheduler', 'mailgun-cluster']) {
      const groups = await renderPrometheusRuleGroups(chart, {
        values: { ...values, 'leaderElection.enabled': false, 'sharding.enabled': true, replicaCount: 3 },
      });
      await promtoolTestRules(groups, [testFile('runtime-sharding')]);
    }
  });
});
