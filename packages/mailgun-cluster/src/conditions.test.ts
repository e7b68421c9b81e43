import { registerSecret } from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionType, setCondition } from './conditions.ts';

describe('setCondition', () => {
  it('redacts credentials from the message: the Authorization header Mailgun echoed, bearer tokens, the registered key', () => {
    registerSecret('key-3ax6xnjp29jd6fds4gc373sgvjxteol0');
    const [condition] = setCondition(
      undefined,
      {
        type: ConditionType.RequestSent,
        status: 'False',
        reason: 'Rejected',
        message:
          'sending the request mail: 400 Authorization: Basic YXBpOmtleS0xMjM= was refused; ' +
          'Bearer hc_T0k3nV4lu3.x-y; key key-3ax6xnjp29jd6fds4gc373sgvjxteol0',
      },
      new Date('2026-01-01T00:00:00.500Z'),
    );
    assert.equal(
      condition?.message,
      'sending the request mail: 400 Authorization: Basic [REDACTED] was refused; Bearer [REDACTED]; key [REDACTED]',
    );
    assert.equal(condition.lastTransitionTime, '2026-01-01T00:00:00Z');
  });

  it('leaves a condition without a message without one', () => {
    const [condition] = setCondition(
      undefined,
      { type: ConditionType.Ready, status: 'True', reason: 'Provisioned' },
      new Date(0),
    );
    assert.equal(condition && 'message' in condition, false);
  });
});
