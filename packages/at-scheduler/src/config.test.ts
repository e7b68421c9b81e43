import { parseProgram } from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_IMAGE, program } from './config.ts';

function parse(argv: string[], env: Record<string, string> = {}) {
  const parsed = parseProgram(program, argv, env);
  assert.equal(parsed.action, 'run');
  return parsed;
}

describe('at-scheduler options', () => {
  it('defaults: a pinned busybox, 16 workers per namespace, all namespaces, the Lease at-scheduler', () => {
    const { config, standard } = parse([]);
    assert.equal(config.defaultImage, DEFAULT_IMAGE);
    assert.match(DEFAULT_IMAGE, /:\d+\.\d+\.\d+$|@sha256:/);
    assert.equal(standard.workers, 16);
    assert.equal(standard.watchNamespace, undefined);
    assert.equal(standard.leaderElectionId, 'at-scheduler');
  });

  it('--default-image / DEFAULT_IMAGE: an image reference, the flag first', () => {
    const image = 'registry.example/sh@sha256:abc';
    assert.equal(parse([], { DEFAULT_IMAGE: image }).config.defaultImage, image);
    assert.equal(parse(['--default-image', image], { DEFAULT_IMAGE: 'other:1' }).config.defaultImage, image);
    assert.throws(() => parse([], { DEFAULT_IMAGE: 'busy box' }), {
      message: `DEFAULT_IMAGE: expected an image reference such as ${DEFAULT_IMAGE}, got "busy box"`,
    });
  });
});
