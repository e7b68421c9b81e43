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

  it('offers sharding: off by default, the ring named at-scheduler; on, leader election is off', () => {
    const unsharded = parse([]).standard;
    assert.deepEqual(
      [unsharded.sharding, unsharded.shardingRing, unsharded.leaderElect],
      [false, 'at-scheduler', true],
    );
    const sharded = parse([], { SHARDING: 'true', SHARDING_RING: 'at-scheduler-blue' }).standard;
    assert.deepEqual(
      [sharded.sharding, sharded.shardingRing, sharded.leaderElect],
      [true, 'at-scheduler-blue', false],
    );
    assert.throws(() => parse(['--sharding', '--leader-elect']), {
      message: /^--sharding and --leader-elect: sharding replaces leader election/,
    });
  });
});
