/**
 * chart-versions.ts against a throwaway git repository: the rule chart-testing applies to a pull request.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chartVersion, unbumpedCharts } from './chart-versions.ts';

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
