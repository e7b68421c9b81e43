/**
 * chart-versions.ts against a throwaway git repository: the rule chart-testing applies to a pull request.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chartVersion, localDependencies, staleLocalDependencies, unbumpedCharts } from './chart-versions.ts';

let repo: string;
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd: repo,
    encoding: 'utf8',
  });
const write = (path: string, text: string) => {
  mkdirSync(join(repo, path, '..'), { recursive: true });
  writeFileSync(join(repo, path), text);
};

before(() => {
  repo = mkdtempSync(join(tmpdir(), 'chart-versions-'));
  git('init', '-q', '-b', 'main');
  write('charts/a/Chart.yaml', 'apiVersion: v2\nname: a\nversion: 0.1.0\n');
  write('charts/a/values.yaml', 'x: 1\n');
  write('charts/b/Chart.yaml', "apiVersion: v2\nname: b\nversion: '1.0.0'\n");
  write('README.md', 'r\n');
  git('add', '.');
  git('commit', '-q', '-m', 'base');
  git('checkout', '-q', '-b', 'change');
});
after(() => {
  rmSync(repo, { recursive: true, force: true });
});

test('reads the top-level version, quoted or not, with a comment', () => {
  assert.equal(chartVersion('name: a\nversion: 0.1.0\n'), '0.1.0');
  assert.equal(chartVersion("version: '1.2.3' # bump on every change\n"), '1.2.3');
  assert.equal(chartVersion('dependencies:\n  - version: 1.0.0\n'), undefined);
});

test('no chart changed, or a change outside charts/: passes', () => {
  assert.deepEqual(unbumpedCharts(repo, 'main'), []);
  write('README.md', 'changed\n');
  git('commit', '-q', '-am', 'readme');
  assert.deepEqual(unbumpedCharts(repo, 'main'), []);
});

test('a chart changed without a new version fails, naming it; with a bump it passes', () => {
  write('charts/a/values.yaml', 'x: 2\n');
  // Not committed yet: counted too, so it fails before the commit that would fail CI.
  assert.deepEqual(unbumpedCharts(repo, 'main'), [
    'charts/a: changed since main, but its version is still 0.1.0; bump it',
  ]);
  git('commit', '-q', '-am', 'values');
  assert.equal(unbumpedCharts(repo, 'main').length, 1);
  write('charts/a/Chart.yaml', 'apiVersion: v2\nname: a\nversion: 0.1.1\n');
  git('commit', '-q', '-am', 'bump');
  assert.deepEqual(unbumpedCharts(repo, 'main'), []);
});

test('a chart new since the base passes', () => {
  write('charts/c/Chart.yaml', 'apiVersion: v2\nname: c\nversion: 0.1.0\n');
  git('add', '.');
  git('commit', '-q', '-m', 'new chart');
  assert.deepEqual(unbumpedCharts(repo, 'main'), []);
});

test('reads the file:// dependencies on charts of the repository, and only those', () => {
  const chartYaml = [
    'apiVersion: v2',
    'name: a',
    'version: 0.1.0',
    'dependencies:',
    '  - name: lib',
    "    version: '0.2.0'",
    '    repository: file://../lib',
    '  - name: redis',
    '    version: 1.0.0',
    '    repository: oci://registry.example/charts',
    'keywords: [x]',
    '',
  ].join('\n');
  assert.deepEqual(localDependencies(chartYaml), [{ name: 'lib', version: '0.2.0', dir: 'lib' }]);
  assert.deepEqual(localDependencies('apiVersion: v2\nname: a\n'), []);
});

test("a dependent that pins another version than the library chart's own fails, naming both", () => {
  write('charts/lib/Chart.yaml', 'apiVersion: v2\nname: lib\ntype: library\nversion: 0.2.0\n');
  const dependent = (pin: string) =>
    `apiVersion: v2\nname: d\nversion: 0.1.0\ndependencies:\n  - name: lib\n    version: ${pin}\n    repository: file://../lib\n`;
  write('charts/d/Chart.yaml', dependent('0.1.0'));
  assert.deepEqual(staleLocalDependencies(repo), [
    'charts/d: depends on lib 0.1.0, but charts/lib is 0.2.0; pin it and bump charts/d',
  ]);
  write('charts/d/Chart.yaml', dependent('0.2.0'));
  assert.deepEqual(staleLocalDependencies(repo), []);
});
