import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionType, setConditions } from './conditions.ts';

describe('setConditions', () => {
  it('redacts credentials from messages, new and replaced: an Authorization header and a bearer token', () => {
    const leaked = 'creating pod failed: Authorization: Basic YXBpOmtleS0xMjM= and Bearer hc_T0k3nV4lu3.x-y';
    const first = setConditions(
      undefined,
      [{ type: ConditionType.Running, status: 'False', reason: 'PodCreateFailed', message: leaked }],
      1,
      '2029-01-01T00:00:00Z',
    );
    const second = setConditions(
      first,
      [
        {
          type: ConditionType.Running,
          status: 'False',
          reason: 'PodCreateFailed',
          message: `again: ${leaked}`,
        },
      ],
      2,
      '2029-01-01T00:01:00Z',
    );
    const redacted = 'creating pod failed: Authorization: Basic [REDACTED] and Bearer [REDACTED]';
    assert.equal(first[0]?.message, redacted);
    assert.equal(second[0]?.message, `again: ${redacted}`);
  });
});
