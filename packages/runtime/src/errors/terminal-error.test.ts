import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TerminalError, isTerminal } from './terminal-error.ts';

describe('TerminalError', () => {
  it('is terminal, keeps its cause, and stays terminal when wrapped', () => {
    const cause = new Error('spec.schedule "tomorrow" is not a timestamp');
    const terminal = new TerminalError('invalid spec', { cause });
    assert.equal(isTerminal(terminal), true);
    assert.equal(terminal.cause, cause);
    assert.equal(terminal.name, 'TerminalError');
    assert.equal(isTerminal(new Error('reconcile At x', { cause: terminal })), true);
  });

  it('ordinary errors and non-errors are not terminal', () => {
    assert.equal(isTerminal(new Error('boom')), false);
    assert.equal(isTerminal(new Error('boom', { cause: new Error('inner') })), false);
    assert.equal(isTerminal(undefined), false);
    assert.equal(isTerminal({ name: 'TerminalError' }), false);
  });
});
