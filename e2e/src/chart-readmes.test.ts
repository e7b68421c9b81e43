/**
 * Every chart's README lists every value (the root README promises it): each top-level key of
 * values.yaml appears in the README's Values table, as `key` or as the head of `key.sub`.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { chartPath, repoRoot } from './charts.ts';

// The charts users install: the library chart (loopwright-controller) has no values of its own; its
// README documents the values every controller chart shares.
const charts = readdirSync(join(repoRoot, 'charts'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(repoRoot, 'charts', entry.name, 'values.yaml')))
  .map((entry) => entry.name);

/** The README from its `## Values` heading to the next heading of that level. */
function valuesSection(readme: string): string {
  const start = readme.indexOf('\n## Values');
  assert.notEqual(start, -1, 'the README has a "## Values" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

describe('chart READMEs', () => {
  test('there are charts to check', () => {
    assert.ok(charts.length >= 3, charts.join(', '));
  });

  for (const chart of charts) {
    test(`${chart}: the Values table names every top-level value`, () => {
      const values = parse(readFileSync(join(chartPath(chart), 'values.yaml'), 'utf8')) as Record<
        string,
        unknown
      >;
      const table = valuesSection(readFileSync(join(chartPath(chart), 'README.md'), 'utf8'));
      const missing = Object.keys(values).filter(
        (key) => !table.includes(`\`${key}\``) && !table.includes(`\`${key}.`),
      );
      assert.deepEqual(missing, [], `values.yaml keys missing from charts/${chart}/README.md's Values table`);
    });
  }
});
