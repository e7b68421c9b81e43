import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiServerFlagsOf } from './feature-gates.ts';

describe('apiServerFlagsOf', () => {
  it('passes --feature-gates on to kube-apiserver, and nothing without it', () => {
    assert.deepEqual(apiServerFlagsOf(['up', '--node']), []);
    assert.deepEqual(apiServerFlagsOf(['up', '--feature-gates=ShardedListAndWatch=true']), [
      '--feature-gates=ShardedListAndWatch=true',
    ]);
    assert.deepEqual(apiServerFlagsOf(['run', '--feature-gates=ShardedListAndWatch=true,WatchList=false']), [
      '--feature-gates=ShardedListAndWatch=true,WatchList=false',
    ]);
  });

  for (const bad of [
    ['--feature-gates'],
    ['--feature-gates='],
    ['--feature-gates=ShardedListAndWatch'],
    ['--feature-gates=ShardedListAndWatch=yes'],
    ['--feature-gates=shardedListAndWatch=true'],
    ['--feature-gates=A=true,'],
    ['--feature-gates=A=true', '--feature-gates=B=true'],
  ]) {
    it(`refuses ${bad.join(' ')} in one line naming the option`, () => {
      assert.throws(
        () => apiServerFlagsOf(bad),
        /^Error: --feature-gates: expected one --feature-gates=Name=true\|false/,
      );
    });
  }
});
