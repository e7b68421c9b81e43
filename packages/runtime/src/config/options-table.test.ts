import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { duration } from './kinds.ts';
import { option, secret } from './option.ts';
import { optionsTable } from './options-table.ts';
import { defineProgram, standardOptionsOf } from './program.ts';

const program = defineProgram({
  name: 'example',
  packageJson: new URL('file:///unused/package.json'),
  workers: 3,
  reconcileTimeout: '0',
  namespaced: false,
  options: {
    period: option(duration('1s', '1h'), { flag: '--period', description: 'how often | why', default: '5s' }),
    token: secret({
      fileFlag: '--api-token-file',
      description: 'the API token',
      expected: 'a token',
      valid: () => true,
    }),
  },
});

describe('optionsTable', () => {
  const lines = optionsTable(program).split('\n');

  it('one row per option, its own first, as a Markdown table Prettier leaves as it is', () => {
    assert.match(lines[0] ?? '', /^\| Flag +\| Variable +\| Default +\| Meaning +\|$/);
    assert.match(lines[1] ?? '', /^\| -+ \| -+ \| -+ \| -+ \|$/);
    assert.equal(lines.length, 2 + 2 + Object.keys(standardOptionsOf(program)).length);
    assert.ok(
      lines.every((line) => line.length === lines[0]?.length),
      'columns padded to one width',
    );
    assert.match(
      lines[2] ?? '',
      /^\| `--period` +\| `PERIOD` +\| `5s` +\| How often \\\| why; a duration from 1s to 1h, like 1m30s\. +\|$/,
    );
    assert.match(
      lines[3] ?? '',
      /^\| `--api-token-file` +\| `API_TOKEN_FILE` or `API_TOKEN` +\| required \(one\) +\| The API token: the file/,
    );
    assert.match(lines.join('\n'), /^\| `--workers` +\| `WORKERS` +\| `3` +\|/m);
    assert.match(
      lines.join('\n'),
      /^\| `--pod-namespace` +\| `POD_NAMESPACE` +\| {2,}\|/m,
      'no default: empty',
    );
  });
});
