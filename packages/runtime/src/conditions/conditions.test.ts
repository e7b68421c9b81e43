import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerSecret } from '../log/redact.ts';
import {
  InvalidConditionError,
  findCondition,
  isConditionReason,
  isConditionTrue,
  removeCondition,
  setCondition,
  type Condition,
  type ConditionInput,
} from './conditions.ts';

const t0 = new Date('2025-03-01T10:00:00.000Z');
const t1 = new Date('2025-03-01T11:30:15.987Z');

const ready: Condition = {
  type: 'Ready',
  status: 'False',
  observedGeneration: 1,
  lastTransitionTime: '2025-03-01T10:00:00Z',
  reason: 'Provisioning',
  message: 'waiting for the server',
};
const synced: Condition = {
  type: 'Synced',
  status: 'True',
  lastTransitionTime: '2025-02-01T00:00:00Z',
  reason: 'Synced',
  message: '',
};

const frozen = (conditions: Condition[]): readonly Condition[] =>
  Object.freeze(conditions.map((condition) => Object.freeze({ ...condition })));

describe('setCondition', () => {
  it('adds a condition to no conditions, stamped with now in whole seconds', () => {
    assert.deepEqual(
      setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Running', message: 'up' }, t1),
      [
        {
          type: 'Ready',
          status: 'True',
          lastTransitionTime: '2025-03-01T11:30:15Z',
          reason: 'Running',
          message: 'up',
        },
      ],
    );
  });

  it('appends a new type after the existing ones, keeping their order', () => {
    const result = setCondition(
      frozen([synced, ready]),
      { type: 'Paused', status: 'False', reason: 'NotPaused' },
      t1,
    );
    assert.deepEqual(
      result.map((condition) => condition.type),
      ['Synced', 'Ready', 'Paused'],
    );
  });

  it('writes fields in metav1.Condition order, observedGeneration only when given', () => {
    const [withGeneration] = setCondition(
      undefined,
      { message: 'm', reason: 'R', status: 'True', type: 'Ready', observedGeneration: 0 },
      t0,
    );
    assert.deepEqual(Object.keys(withGeneration ?? {}), [
      'type',
      'status',
      'observedGeneration',
      'lastTransitionTime',
      'reason',
      'message',
    ]);
    const [withoutGeneration] = setCondition(undefined, { type: 'Ready', status: 'True', reason: 'R' }, t0);
    assert.deepEqual(Object.keys(withoutGeneration ?? {}), [
      'type',
      'status',
      'lastTransitionTime',
      'reason',
      'message',
    ]);
  });

  it('defaults the message to empty, as Go zero values do', () => {
    assert.equal(setCondition(undefined, { type: 'Ready', status: 'True', reason: 'R' }, t0)[0]?.message, '');
  });

  it('moves lastTransitionTime when the status changes', () => {
    const [updated] = setCondition(
      frozen([ready]),
      {
        type: 'Ready',
        status: 'True',
        reason: 'Provisioning',
        message: 'waiting for the server',
        observedGeneration: 1,
      },
      t1,
    );
    assert.deepEqual(updated, { ...ready, status: 'True', lastTransitionTime: '2025-03-01T11:30:15Z' });
  });

  it('keeps lastTransitionTime and updates reason, message and observedGeneration in place', () => {
    const changes: Partial<ConditionInput>[] = [
      { reason: 'WaitingForNetwork' },
      { message: 'still waiting' },
      { observedGeneration: 2 },
      { reason: 'Other', message: 'other', observedGeneration: 3 },
    ];
    for (const change of changes) {
      const input: ConditionInput = { ...ready, ...change };
      const result = setCondition(frozen([ready, synced]), input, t1);
      assert.deepEqual(result, [{ ...ready, ...change }, synced], JSON.stringify(change));
    }
  });

  it('drops observedGeneration when the input has none', () => {
    const input: ConditionInput = {
      type: ready.type,
      status: ready.status,
      reason: ready.reason,
      message: ready.message,
    };
    assert.deepEqual(setCondition(frozen([ready]), input, t1), [
      {
        type: 'Ready',
        status: 'False',
        lastTransitionTime: '2025-03-01T10:00:00Z',
        reason: 'Provisioning',
        message: 'waiting for the server',
      },
    ]);
  });

  it('returns the same list when nothing changes, so no status write is needed', () => {
    const conditions = frozen([synced, ready]);
    assert.equal(setCondition(conditions, ready, t1), conditions);
    assert.equal(
      setCondition(conditions, { ...synced, message: undefined }, t1),
      conditions,
      'message defaults to empty',
    );
  });

  it('returns a new list and leaves its input alone when something changes', () => {
    const conditions = frozen([synced, ready]);
    const result = setCondition(conditions, { ...ready, status: 'True' }, t1);
    assert.notEqual(result, conditions);
    assert.equal(result[0], conditions[0], 'untouched conditions are shared');
    assert.deepEqual(conditions, [synced, ready]);
  });

  it('truncates times to seconds as metav1.Time does, never rounding up', () => {
    const [condition] = setCondition(
      undefined,
      { type: 'A', status: 'True', reason: 'R' },
      new Date('2025-12-31T23:59:59.999Z'),
    );
    assert.equal(condition?.lastTransitionTime, '2025-12-31T23:59:59Z');
  });

  it('throws for an invalid date when it needs the time', () => {
    assert.throws(
      () => setCondition(undefined, { type: 'A', status: 'True', reason: 'R' }, new Date(Number.NaN)),
      RangeError,
    );
  });

  it('redacts the message as log lines are', () => {
    registerSecret('conditions-test-secret-value');
    const [condition] = setCondition(
      undefined,
      {
        type: 'Ready',
        status: 'False',
        reason: 'Failed',
        message: 'rejected conditions-test-secret-value with Authorization: Basic YXBpOmtleS1hYmM=',
      },
      t0,
    );
    assert.equal(condition?.message, 'rejected [REDACTED] with Authorization: Basic [REDACTED]');
  });

  it('compares the redacted message, so a repeated secret-bearing message changes nothing', () => {
    registerSecret('conditions-test-other-secret');
    const input: ConditionInput = {
      type: 'Ready',
      status: 'False',
      reason: 'Failed',
      message: 'conditions-test-other-secret',
    };
    const once = setCondition(undefined, input, t0);
    assert.equal(setCondition(once, input, t1), once);
  });

  it('cuts a message to 32768 bytes of UTF-8, never inside a character', () => {
    const fits = 'a'.repeat(32768);
    assert.equal(
      setCondition(undefined, { type: 'A', status: 'True', reason: 'R', message: fits }, t0)[0]?.message,
      fits,
    );
    const [cut] = setCondition(
      undefined,
      { type: 'A', status: 'True', reason: 'R', message: `${'a'.repeat(32767)}é and more` },
      t0,
    );
    assert.equal(cut?.message, 'a'.repeat(32767), 'the two-byte é does not fit in the last byte');
    const [long] = setCondition(
      undefined,
      { type: 'A', status: 'True', reason: 'R', message: 'x'.repeat(40000) },
      t0,
    );
    assert.equal(long?.message.length, 32768);
  });

  describe('validation', () => {
    const valid: ConditionInput = { type: 'Ready', status: 'True', reason: 'Running' };
    const rejects = (input: ConditionInput, field: RegExp) => {
      assert.throws(
        () => setCondition(frozen([ready]), input, t0),
        (error: unknown) => error instanceof InvalidConditionError && field.test(error.message),
        JSON.stringify(input),
      );
    };

    it('accepts CamelCase reasons with digits, underscores, commas and colons inside', () => {
      for (const reason of ['A', 'Ready', 'ready', 'Pod2Started', 'Snake_Case', 'With,Comma:Colon_', 'x1']) {
        assert.equal(setCondition(undefined, { ...valid, reason }, t0)[0]?.reason, reason);
        assert.equal(isConditionReason(reason), true, reason);
      }
      assert.equal(
        setCondition(undefined, { ...valid, reason: 'R'.repeat(1024) }, t0)[0]?.reason.length,
        1024,
      );
      assert.equal(isConditionReason('R'.repeat(1024)), true);
    });

    it('rejects reasons the API server would reject', () => {
      for (const reason of [
        '',
        '1Start',
        '_Start',
        'Ends,',
        'Ends:',
        'Has Space',
        'Has-Dash',
        'Dotted.Reason',
        'Ümlaut',
      ]) {
        rejects({ ...valid, reason }, /reason/);
        assert.equal(isConditionReason(reason), false, reason);
      }
      rejects({ ...valid, reason: 'R'.repeat(1025) }, /reason/);
      assert.equal(isConditionReason('R'.repeat(1025)), false);
    });

    it('accepts CamelCase and prefixed types', () => {
      for (const type of ['Ready', 'ready', 'Ready-2.x_y', 'example.com/Ready', 'a.b-c.d/Synced', 'A'])
        assert.equal(setCondition(undefined, { ...valid, type }, t0)[0]?.type, type);
      const longest = `${'a'.repeat(253)}/${'B'.repeat(62)}`;
      assert.equal(longest.length, 316);
      assert.equal(setCondition(undefined, { ...valid, type: longest }, t0)[0]?.type, longest);
    });

    it('rejects types the API server would reject', () => {
      for (const type of [
        '',
        '-Ready',
        'Ready-',
        'Has Space',
        'Example.com/Ready',
        '/Ready',
        'a/b/C',
        'a_b/C',
      ])
        rejects({ ...valid, type }, /type/);
      rejects({ ...valid, type: `${'a'.repeat(254)}/${'B'.repeat(62)}` }, /type/);
    });

    it('rejects a status other than True, False or Unknown', () => {
      for (const status of ['true', 'Yes', '']) rejects({ ...valid, status: status as 'True' }, /status/);
      for (const status of ['True', 'False', 'Unknown'] as const)
        assert.equal(setCondition(undefined, { ...valid, status }, t0)[0]?.status, status);
    });

    it('rejects an observedGeneration that is negative or not an integer', () => {
      for (const observedGeneration of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
        rejects({ ...valid, observedGeneration }, /observedGeneration/);
      assert.equal(
        setCondition(undefined, { ...valid, observedGeneration: 0 }, t0)[0]?.observedGeneration,
        0,
      );
    });

    it('names every problem at once, and changes nothing', () => {
      const conditions = frozen([ready]);
      assert.throws(
        () => setCondition(conditions, { type: 'Ready', status: 'Maybe' as 'True', reason: 'no good' }, t0),
        (error: unknown) =>
          error instanceof InvalidConditionError &&
          /^invalid condition "Ready": status .*; reason /.test(error.message),
      );
      assert.deepEqual(conditions, [ready]);
    });

    it('validates even when nothing would change', () => {
      rejects({ ...ready, reason: 'Not Valid' }, /reason/);
    });
  });
});

describe('removeCondition', () => {
  it('returns a new list without the type, keeping the order of the rest', () => {
    const paused: Condition = { ...synced, type: 'Paused' };
    const conditions = frozen([synced, ready, paused]);
    assert.deepEqual(removeCondition(conditions, 'Ready'), [synced, paused]);
    assert.deepEqual(conditions, [synced, ready, paused]);
  });

  it('returns the same list when there is no such condition', () => {
    const conditions = frozen([synced]);
    assert.equal(removeCondition(conditions, 'Ready'), conditions);
    assert.equal(removeCondition(undefined, 'Ready'), undefined);
  });
});

describe('findCondition and isConditionTrue', () => {
  it('find the condition of a type', () => {
    assert.equal(findCondition([synced, ready], 'Ready'), ready);
    assert.equal(findCondition([synced], 'Ready'), undefined);
    assert.equal(findCondition(undefined, 'Ready'), undefined);
  });

  it('read any condition list, e.g. a Node status', () => {
    const nodeConditions = [
      { type: 'MemoryPressure', status: 'False' },
      { type: 'Ready', status: 'True', lastHeartbeatTime: 'x' },
    ];
    assert.equal(findCondition(nodeConditions, 'Ready')?.lastHeartbeatTime, 'x');
    assert.equal(isConditionTrue(nodeConditions, 'Ready'), true);
  });

  it('isConditionTrue is true only for an existing condition with status True', () => {
    assert.equal(isConditionTrue([synced], 'Synced'), true);
    assert.equal(isConditionTrue([ready], 'Ready'), false);
    assert.equal(isConditionTrue([{ ...ready, status: 'Unknown' }], 'Ready'), false);
    assert.equal(isConditionTrue([synced], 'Ready'), false);
    assert.equal(isConditionTrue(undefined, 'Ready'), false);
  });
});
