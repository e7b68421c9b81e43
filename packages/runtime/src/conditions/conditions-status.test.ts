import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition } from './conditions.ts';
import { updateConditions } from './conditions-status.ts';

const t0 = new Date('2025-03-01T10:00:00.000Z');
const t1 = new Date('2025-03-01T11:00:00.500Z');

const ready: Condition = {
  type: 'Ready',
  status: 'True',
  observedGeneration: 1,
  lastTransitionTime: '2025-03-01T10:00:00Z',
  reason: 'Reconciled',
  message: 'up to date',
};
const paused: Condition = {
  type: 'Paused',
  status: 'False',
  observedGeneration: 1,
  lastTransitionTime: '2025-02-01T00:00:00Z',
  reason: 'NotPaused',
  message: '',
};
const readyInput = { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'up to date' } as const;

describe('updateConditions', () => {
  it('a first status: every condition is new, so each is a transition', () => {
    const update = updateConditions(undefined, 1, [readyInput], t0);
    assert.deepEqual(update, {
      status: { observedGeneration: 1, conditions: [ready] },
      transitions: [ready],
    });
  });

  it('nothing to write when the conditions and observedGeneration already say it', () => {
    const status = { observedGeneration: 1, conditions: [paused, ready] };
    assert.deepEqual(updateConditions(status, 1, [readyInput], t1), { status: undefined, transitions: [] });
  });

  it('nothing to write for no conditions and the same generation', () => {
    assert.deepEqual(updateConditions({ observedGeneration: 3 }, 3, [], t1), {
      status: undefined,
      transitions: [],
    });
  });

  it('a new generation alone: written (conditions and status), no transition', () => {
    const update = updateConditions({ observedGeneration: 1, conditions: [ready] }, 2, [readyInput], t1);
    assert.deepEqual(update, {
      status: { observedGeneration: 2, conditions: [{ ...ready, observedGeneration: 2 }] },
      transitions: [],
    });
  });

  it('observedGeneration missing from an otherwise current status: written', () => {
    const update = updateConditions({ conditions: [ready] }, 1, [readyInput], t1);
    assert.deepEqual(update.status, { observedGeneration: 1, conditions: [ready] });
    assert.deepEqual(update.transitions, []);
  });

  it('a new message alone: written, no transition', () => {
    const update = updateConditions(
      { observedGeneration: 1, conditions: [ready] },
      1,
      [{ ...readyInput, message: 'still up to date' }],
      t1,
    );
    assert.deepEqual(update.status?.conditions, [{ ...ready, message: 'still up to date' }]);
    assert.deepEqual(update.transitions, []);
  });

  it('a status change: a transition, lastTransitionTime moves', () => {
    const update = updateConditions(
      { observedGeneration: 1, conditions: [ready] },
      1,
      [{ type: 'Ready', status: 'False', reason: 'Suspended', message: 'suspended' }],
      t1,
    );
    const suspended: Condition = {
      ...ready,
      status: 'False',
      lastTransitionTime: '2025-03-01T11:00:00Z',
      reason: 'Suspended',
      message: 'suspended',
    };
    assert.deepEqual(update, {
      status: { observedGeneration: 1, conditions: [suspended] },
      transitions: [suspended],
    });
  });

  it('a reason change under the same status: a transition, lastTransitionTime stays', () => {
    const update = updateConditions(
      { observedGeneration: 1, conditions: [ready] },
      1,
      [{ ...readyInput, reason: 'Adopted' }],
      t1,
    );
    assert.deepEqual(update.transitions, [{ ...ready, reason: 'Adopted' }]);
    assert.deepEqual(update.status?.conditions, [{ ...ready, reason: 'Adopted' }]);
  });

  it('keeps the conditions it is not given, and reports only the ones that transitioned, in input order', () => {
    const update = updateConditions(
      { observedGeneration: 1, conditions: [paused, ready] },
      1,
      [
        { type: 'Synced', status: 'True', reason: 'Synced' },
        readyInput,
        { type: 'Degraded', status: 'False', reason: 'Healthy' },
      ],
      t1,
    );
    assert.deepEqual(
      update.status?.conditions.map((condition) => condition.type),
      ['Paused', 'Ready', 'Synced', 'Degraded'],
    );
    assert.deepEqual(
      update.transitions.map((condition) => condition.type),
      ['Synced', 'Degraded'],
    );
  });

  it('leaves the current status alone (usually the object in the cache)', () => {
    const conditions = Object.freeze([Object.freeze({ ...ready })]);
    const status = Object.freeze({ observedGeneration: 1, conditions });
    updateConditions(status, 2, [{ type: 'Ready', status: 'False', reason: 'Suspended' }], t1);
    assert.deepEqual(status, { observedGeneration: 1, conditions: [ready] });
  });
});
