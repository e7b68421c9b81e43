import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LineDecoder } from './line-decoder.ts';

describe('LineDecoder', () => {
  it('reassembles lines cut anywhere and splits several lines in one chunk', () => {
    const decoder = new LineDecoder();
    assert.deepEqual(decoder.push('{"a"'), []);
    assert.deepEqual(decoder.push(':1}\n{"b":2}\n{"c'), ['{"a":1}', '{"b":2}']);
    assert.deepEqual(decoder.push('":3}'), []);
    assert.deepEqual(decoder.push('\n'), ['{"c":3}']);
    assert.equal(decoder.end(), '');
  });

  it('returns an unterminated remainder at the end', () => {
    const decoder = new LineDecoder();
    decoder.push('{"a":1}\n{"trunc');
    assert.equal(decoder.end(), '{"trunc');
  });

  it('takes the remainder away with it: after end() the decoder starts a new stream empty', () => {
    const decoder = new LineDecoder();
    decoder.push('{"trunc');
    decoder.end();
    assert.deepEqual(decoder.push('{"a":1}\n'), ['{"a":1}']);
    assert.equal(decoder.end(), '');
  });
});
