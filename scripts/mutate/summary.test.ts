import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatSummary, mutationCounts, mutationScore } from './summary.ts';

const mutants = (...statuses: string[]) => ({ mutants: statuses.map((status) => ({ status })) });

describe('mutation summary', () => {
  it('counts mutants by status across files, errors apart', () => {
    const report = {
      files: {
        'src/a.ts': mutants('Killed', 'Killed', 'Survived', 'Timeout', 'CompileError'),
        'src/b.ts': mutants('NoCoverage', 'RuntimeError', 'Ignored', 'Killed'),
      },
    };
    assert.deepEqual(mutationCounts(report), {
      killed: 3,
      timeout: 1,
      survived: 1,
      noCoverage: 1,
      errors: 2,
    });
  });

  it('scores like Stryker: killed and timed out over every mutant that ran or had no test', () => {
    assert.equal(mutationScore({ killed: 6, timeout: 2, survived: 1, noCoverage: 1, errors: 5 }), 80);
    assert.equal(mutationScore({ killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 3 }), undefined);
  });

  it('prints one aligned line per package, marking failed runs', () => {
    const table = formatSummary([
      {
        name: 'workqueue',
        counts: { killed: 90, timeout: 5, survived: 5, noCoverage: 0, errors: 1 },
        seconds: 754,
        passed: true,
      },
      { name: 'informer', counts: undefined, seconds: 3.2, passed: false },
    ]);
    assert.equal(
      table,
      [
        'package     score  killed  timeout  survived  no cov  errors    time',
        'workqueue  95.00%      90        5         5       0       1  12m34s',
        'informer        -       -        -         -       -       -      3s  FAILED',
      ].join('\n'),
    );
  });
});
