import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { observeConditions } from './conditions.ts';
import type { AtStatusCondition } from './generated/at-types.ts';

describe('observeConditions', () => {
  it('moves only observedGeneration, and leaves the input (the cache) untouched', () => {
    const succeeded: AtStatusCondition = {
      type: 'Succeeded',
      status: 'True',
      observedGeneration: 1,
      lastTransitionTime: '2029-01-01T00:00:00Z',
      reason: 'Completed',
      message: 'Completed, exit code 0',
    };
    assert.deepEqual(observeConditions([succeeded], 3), [{ ...succeeded, observedGeneration: 3 }]);
    assert.equal(succeeded.observedGeneration, 1);
  });
});
