import { variablesRead } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, FLAGS, VARIABLES, parseConfig, parseDuration } from './config.ts';

const TOKEN = { HCLOUD_TOKEN: 'a'.repeat(64) };

describe('parseConfig', () => {
  it('defaults: HCCM values', () => {
    const config = parseConfig(TOKEN);
    assert.equal(config.endpoint, 'https://api.hetzner.cloud/v1');
    assert.equal(config.addressFamily, 'ipv4');
    assert.equal(config.zoneLabels, true);
    assert.equal(config.network, undefined);
    assert.equal(config.nodeMonitorPeriodMs, 5000);
    assert.equal(config.nodeStatusUpdateFrequencyMs, 300_000);
    assert.deepEqual(config.leaderElection, { namespace: undefined, leaseName: 'cloud-node' });
    assert.equal(config.tokenSource, 'HCLOUD_TOKEN');
  });

  it('reads every variable; flags win over their variables', () => {
    const config = parseConfig(
      {
        HCLOUD_TOKEN_FILE: '/t',
        HCLOUD_ENDPOINT: 'http://127.0.0.1:1/v1/',
        HCLOUD_NETWORK: 'k8s',
        HCLOUD_INSTANCES_ADDRESS_FAMILY: 'DualStack',
        HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: 'false',
        HCLOUD_DEBUG: 'true',
        NODE_MONITOR_PERIOD: '1s',
        NODE_SELECTOR: 'a=b',
        POD_NAMESPACE: 'kube-system',
      },
      new Map([
        ['--node-monitor-period', '250ms'],
        ['--node-status-update-frequency', ' 1m30s '],
      ]),
      (path) => (path === '/t' ? 'file-token\n' : ''),
    );
    assert.equal(config.token, 'file-token');
    assert.equal(config.tokenSource, 'HCLOUD_TOKEN_FILE');
    assert.equal(config.endpoint, 'http://127.0.0.1:1/v1');
    assert.equal(config.network, 'k8s');
    assert.equal(config.addressFamily, 'dualstack');
    assert.equal(config.zoneLabels, false);
    assert.equal(config.debug, true);
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.nodeMonitorPeriodMs, 250);
    assert.equal(config.nodeStatusUpdateFrequencyMs, 90_000);
    assert.equal(config.nodeSelector, 'a=b');
    assert.equal(config.leaderElection?.namespace, 'kube-system');
    assert.equal(config.podNamespace, 'kube-system');
  });

  it('a bad value is one line naming the variable, never echoing the token', () => {
    const cases: [Record<string, string>, Record<string, string>, RegExp][] = [
      [{}, {}, /^HCLOUD_TOKEN: required/],
      [{ ...TOKEN, HCLOUD_TOKEN_FILE: '/t' }, {}, /^HCLOUD_TOKEN_FILE: set either/],
      [{ HCLOUD_TOKEN_FILE: '/missing' }, {}, /^HCLOUD_TOKEN_FILE: cannot read "\/missing": ENOENT/],
      [{ HCLOUD_TOKEN: 'has space' }, {}, /^HCLOUD_TOKEN: expected an API token without whitespace$/],
      [{ ...TOKEN, HCLOUD_ENDPOINT: 'ftp://x' }, {}, /^HCLOUD_ENDPOINT: /],
      [
        { ...TOKEN, HCLOUD_INSTANCES_ADDRESS_FAMILY: 'ipv5' },
        {},
        /^HCLOUD_INSTANCES_ADDRESS_FAMILY: expected one of ipv4, ipv6, dualstack/,
      ],
      [
        { ...TOKEN, HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: 'yes' },
        {},
        /^HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: expected true or false/,
      ],
      [{ ...TOKEN, HCLOUD_DEBUG: '2' }, {}, /^HCLOUD_DEBUG: /],
      [{ ...TOKEN, NODE_MONITOR_PERIOD: '5' }, {}, /^NODE_MONITOR_PERIOD: expected a duration/],
      [
        TOKEN,
        { '--node-status-update-frequency': 'soon' },
        /^--node-status-update-frequency: expected a duration/,
      ],
      [TOKEN, { '--node-selector': 'a b' }, /^--node-selector: expected a label selector/],
      [{ ...TOKEN, HEALTH_PORT: '-1' }, {}, /^HEALTH_PORT: /],
      [{ ...TOKEN, LEADER_ELECTION_NAMESPACE: 'Kube' }, {}, /^LEADER_ELECTION_NAMESPACE: /],
    ];
    for (const [env, flags, message] of cases) {
      assert.throws(
        () =>
          parseConfig(env, new Map(Object.entries(flags)), (p) => {
            if (p === '/t') return 'x';
            throw Object.assign(new Error('no'), { code: 'ENOENT' });
          }),
        (error: unknown) =>
          error instanceof ConfigError &&
          message.test(error.message) &&
          !error.message.includes('\n') &&
          !error.message.includes('has space') &&
          !error.message.includes('a'.repeat(64)),
        JSON.stringify([env, flags]),
      );
    }
  });

  it('label selectors: equality, existence and set terms', () => {
    for (const selector of [
      'a',
      '!a',
      'a=b',
      'a==b',
      'a!=b',
      'node-role.kubernetes.io/worker',
      'pool in (a, b),!legacy',
      'x notin (y)',
    ])
      assert.equal(parseConfig({ ...TOKEN, NODE_SELECTOR: selector }).nodeSelector, selector);
  });

  it('parseDuration: Go syntax', () => {
    assert.equal(parseDuration('5s'), 5000);
    assert.equal(parseDuration('1h2m3s4ms'), 3_723_004);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('5'), undefined);
    assert.equal(parseDuration('-5s'), undefined);
  });
});

describe('VARIABLES and FLAGS (the --help tables)', () => {
  it('VARIABLES lists exactly the variables parseConfig reads', () => {
    assert.deepEqual(
      variablesRead((env) => parseConfig(env), TOKEN, { ...TOKEN, LEADER_ELECTION_NAMESPACE: 'le' }),
      VARIABLES.map((variable) => variable.name).sort(),
    );
  });

  it('every documented default behaves exactly like leaving the variable unset', () => {
    const withDefaults = VARIABLES.filter((variable) => variable.default !== undefined);
    assert.ok(withDefaults.length > 0);
    for (const { name, default: value = '' } of withDefaults)
      assert.deepEqual(parseConfig({ ...TOKEN, [name]: value }), parseConfig(TOKEN), name);
  });

  it('each flag overrides a listed variable, and wins over it', () => {
    const names = new Set(VARIABLES.map((variable) => variable.name));
    const values: Record<string, [string, string]> = {
      NODE_MONITOR_PERIOD: ['1s', '2s'],
      NODE_STATUS_UPDATE_FREQUENCY: ['1m', '2m'],
      NODE_SELECTOR: ['a', 'b'],
    };
    assert.deepEqual(FLAGS.map((flag) => flag.variable).sort(), Object.keys(values).sort());
    for (const { name, variable } of FLAGS) {
      assert.ok(names.has(variable), variable);
      const [fromEnv, fromFlag] = values[variable] ?? ['', ''];
      assert.deepEqual(
        parseConfig({ ...TOKEN, [variable]: fromEnv }, new Map([[name, fromFlag]])),
        parseConfig({ ...TOKEN, [variable]: fromFlag }),
        name,
      );
    }
  });

  it('one line per variable', () => {
    for (const { name, description } of VARIABLES) assert.match(description, /^[^\n]+$/, name);
  });
});
