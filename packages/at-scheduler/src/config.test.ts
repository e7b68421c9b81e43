import { variablesRead } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, DEFAULT_IMAGE, VARIABLES, parseConfig } from './config.ts';

describe('parseConfig', () => {
  it('defaults: all namespaces, 10 workers, pinned busybox, leader election, port 8080, info', () => {
    const config = parseConfig({});
    assert.equal(config.namespaces, undefined);
    assert.equal(config.workers, 10);
    assert.equal(config.defaultImage, DEFAULT_IMAGE);
    assert.match(DEFAULT_IMAGE, /:\d+\.\d+\.\d+$|@sha256:/);
    assert.deepEqual(config.leaderElection, { namespace: undefined, leaseName: 'at-scheduler' });
    assert.equal(config.healthPort, 8080);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.rateLimit, { qps: 20, burst: 30 });
  });

  it('reads every variable', () => {
    const config = parseConfig({
      AT_NAMESPACES: 'team-a, team-b,team-a',
      AT_WORKERS: '3',
      AT_DEFAULT_IMAGE: 'registry.example/sh@sha256:abc',
      POD_NAMESPACE: 'ops',
      LEADER_ELECTION_LEASE_NAME: 'at',
      HEALTH_PORT: '0',
      LOG_LEVEL: 'DEBUG',
      LOG_FORMAT: 'json',
      KUBE_API_QPS: '100',
      KUBE_API_BURST: '200',
    });
    assert.deepEqual(config.namespaces, ['team-a', 'team-b']);
    assert.equal(config.workers, 3);
    assert.equal(config.defaultImage, 'registry.example/sh@sha256:abc');
    assert.deepEqual(config.leaderElection, { namespace: 'ops', leaseName: 'at' });
    assert.equal(config.healthPort, 0);
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.logFormat, 'json');
    assert.deepEqual(config.rateLimit, { qps: 100, burst: 200 });
    assert.equal(
      parseConfig({ LEADER_ELECTION_NAMESPACE: 'le', POD_NAMESPACE: 'ops' }).leaderElection?.namespace,
      'le',
    );
    assert.equal(parseConfig({ LEADER_ELECT: 'false' }).leaderElection, undefined);
  });

  it('a bad value is one line naming the variable and what it expects', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ AT_WORKERS: '0' }, /^AT_WORKERS: expected an integer from 1 to 1000, got "0"$/],
      [{ AT_WORKERS: '2.5' }, /^AT_WORKERS: /],
      [{ AT_NAMESPACES: 'ok,Not_A_Name' }, /^AT_NAMESPACES: expected a comma-separated list/],
      [{ AT_NAMESPACES: 'a,,b' }, /^AT_NAMESPACES: /],
      [{ HEALTH_PORT: '70000' }, /^HEALTH_PORT: /],
      [
        { LOG_LEVEL: 'loud' },
        /^LOG_LEVEL: expected one of error, warn, info, http, verbose, debug, silly, got "loud"$/,
      ],
      [{ LOG_FORMAT: 'xml' }, /^LOG_FORMAT: /],
      [{ LEADER_ELECT: 'maybe' }, /^LEADER_ELECT: expected true or false/],
      [{ POD_NAMESPACE: 'Ops' }, /^POD_NAMESPACE: /],
      [{ AT_DEFAULT_IMAGE: 'busy box' }, /^AT_DEFAULT_IMAGE: /],
      [{ KUBE_API_QPS: '-1' }, /^KUBE_API_QPS: /],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => parseConfig(env),
        (error: unknown) =>
          error instanceof ConfigError && message.test(error.message) && !error.message.includes('\n'),
        JSON.stringify(env),
      );
    }
  });
});

describe('VARIABLES (the --help table)', () => {
  it('lists exactly the variables parseConfig reads', () => {
    assert.deepEqual(
      variablesRead((env) => parseConfig(env), {}, { LEADER_ELECTION_NAMESPACE: 'le' }),
      VARIABLES.map((variable) => variable.name).sort(),
    );
  });

  it('every documented default behaves exactly like leaving the variable unset', () => {
    const withDefaults = VARIABLES.filter((variable) => variable.default !== undefined);
    assert.ok(withDefaults.length > 0);
    for (const { name, default: value = '' } of withDefaults)
      assert.deepEqual(parseConfig({ [name]: value }), parseConfig({}), name);
  });

  it('one line per variable', () => {
    for (const { name, description } of VARIABLES) assert.match(description, /^[^\n]+$/, name);
  });
});
