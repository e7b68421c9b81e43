import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPanic } from './panic.ts';

/** What `run` threw. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

describe('isPanic', () => {
  it('is true for thrown values that are not Errors', () => {
    for (const value of ['x', undefined, null, 42, 10n, Symbol('s'), { message: 'looks like an error' }])
      assert.equal(isPanic(value), true, typeof value);
  });

  it('is true for what the engine throws at broken code', () => {
    const nothing = undefined as unknown as { field: { inner: number } };
    const recurse = (n: number): number => recurse(n + 1) + 1;
    const programmingErrors = [
      thrownBy(() => nothing.field.inner), // TypeError: cannot read properties of undefined
      thrownBy(() => (nothing as unknown as () => number)()), // TypeError: not a function
      thrownBy(() => eval('undeclaredName')), // ReferenceError
      thrownBy(() => recurse(0)), // RangeError: maximum call stack size exceeded
      thrownBy(() => new Date(Number.NaN).toISOString()), // RangeError: invalid time value
      thrownBy(() => new Array<number>(-1)), // RangeError: invalid array length
    ];
    assert.deepEqual(
      programmingErrors.map((error) => (error as Error).name),
      ['TypeError', 'TypeError', 'ReferenceError', 'RangeError', 'RangeError', 'RangeError'],
    );
    for (const error of programmingErrors) assert.equal(isPanic(error), true, String(error));
  });

  it('is false for a TypeError with a cause, as fetch throws for a failed connection', async () => {
    const fetchFailure = await fetch('http://127.0.0.1:1/').then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(fetchFailure instanceof TypeError);
    assert.equal(isPanic(fetchFailure), false);
    assert.equal(isPanic(new RangeError('out of range', { cause: new Error('input') })), false);
    assert.equal(isPanic(new ReferenceError('gone', { cause: undefined })), false, 'an explicit cause');
  });

  it('is false for ordinary failures', () => {
    for (const error of [
      new Error('failed'),
      new SyntaxError('bad JSON'),
      new URIError('bad URI'),
      new DOMException('aborted', 'AbortError'),
      new AggregateError([new TypeError('inner')]),
    ])
      assert.equal(isPanic(error), false, error.name);
  });
});
