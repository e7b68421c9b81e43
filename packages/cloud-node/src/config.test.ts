import { parseProgram, type Configuration } from '@loopwright/runtime';
import { writeSecretVolume } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { program } from './config.ts';

const TOKEN = { HCLOUD_TOKEN: 'a'.repeat(64) };

function parse(argv: string[], env: Record<string, string> = TOKEN): Configuration<typeof program.options> {
  const parsed = parseProgram(program, argv, env);
  assert.equal(parsed.action, 'run');
  return parsed;
}

function problem(argv: string[], env: Record<string, string>): string {
  try {
    parseProgram(program, argv, env);
  } catch (error) {
    const { message } = error as Error;
    assert.ok(!message.includes('\n') && !message.includes('a'.repeat(64)) && !message.includes('has space'));
    return message;
  }
  assert.fail(`accepted ${JSON.stringify([argv, env])}`);
}

describe('cloud-node options', () => {
  it("defaults: HCCM's values; 16 workers; no namespace scope (Nodes are cluster-scoped)", () => {
    const { config, standard } = parse([]);
    assert.equal(config.hcloudToken.value(), 'a'.repeat(64));
    assert.equal(config.hcloudToken.source, 'HCLOUD_TOKEN');
    assert.equal(config.hcloudEndpoint, 'https://api.hetzner.cloud/v1');
    assert.equal(config.hcloudNetwork, undefined);
    assert.equal(config.addressFamily, 'ipv4');
    assert.equal(config.zoneLabels, true);
    assert.equal(config.hcloudDebug, false);
    assert.equal(config.nodeMonitorPeriod, 5000);
    assert.equal(config.nodeStatusUpdateFrequency, 300_000);
    assert.equal(config.nodeSelector, undefined);
    assert.equal(standard.workers, 16);
    assert.equal(standard.leaderElectionId, 'cloud-node');
    assert.match(problem(['--watch-namespace=a'], TOKEN), /^--watch-namespace: unknown argument$/);
  });

  it("HCCM's variables and flags; a flag wins over its variable", (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cloud-node-config-'));
    t.after(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    const tokenFile = writeSecretVolume(dir, { token: 'file-token\n' }).token ?? '';
    const { config } = parse(['--node-monitor-period', '250ms', '--node-status-update-frequency= 1m30s '], {
      HCLOUD_TOKEN_FILE: tokenFile,
      HCLOUD_ENDPOINT: 'http://127.0.0.1:1/v1/',
      HCLOUD_NETWORK: 'k8s',
      HCLOUD_INSTANCES_ADDRESS_FAMILY: 'DualStack',
      HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: 'false',
      HCLOUD_DEBUG: 'true',
      NODE_MONITOR_PERIOD: '1s',
      NODE_SELECTOR: 'a=b',
    });
    assert.equal(config.hcloudToken.value(), 'file-token');
    assert.equal(config.hcloudToken.source, 'HCLOUD_TOKEN_FILE');
    // As HCCM's LookupEnvWithFile: with both set, HCLOUD_TOKEN wins and the file is not read.
    const both = parse([], { HCLOUD_TOKEN: 'env-token', HCLOUD_TOKEN_FILE: tokenFile }).config.hcloudToken;
    assert.deepEqual([both.value(), both.source], ['env-token', 'HCLOUD_TOKEN']);
    assert.equal(config.hcloudEndpoint, 'http://127.0.0.1:1/v1');
    assert.equal(config.hcloudNetwork, 'k8s');
    assert.equal(config.addressFamily, 'dualstack');
    assert.equal(config.zoneLabels, false);
    assert.equal(config.hcloudDebug, true);
    assert.equal(config.nodeMonitorPeriod, 250);
    assert.equal(config.nodeStatusUpdateFrequency, 90_000);
    assert.equal(config.nodeSelector, 'a=b');
  });

  it('a bad value is one line naming the flag or variable, never echoing the token', () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[], {}, /^HCLOUD_TOKEN \/ HCLOUD_TOKEN_FILE: required/],
      [[], { HCLOUD_TOKEN: 'has space' }, /^HCLOUD_TOKEN: expected an API token without whitespace$/],
      [[], { HCLOUD_TOKEN_FILE: '/missing' }, /^HCLOUD_TOKEN_FILE: cannot read "\/missing": ENOENT$/],
      [
        [],
        { HCLOUD_TOKEN: 'has space', HCLOUD_TOKEN_FILE: '/missing' },
        /^HCLOUD_TOKEN: expected an API token/,
      ],
      [[], { ...TOKEN, HCLOUD_ENDPOINT: 'ftp://x' }, /^HCLOUD_ENDPOINT: expected an http\(s\) URL/],
      [
        [],
        { ...TOKEN, HCLOUD_INSTANCES_ADDRESS_FAMILY: 'ipv5' },
        /^HCLOUD_INSTANCES_ADDRESS_FAMILY: expected one of ipv4, ipv6, dualstack/,
      ],
      [
        [],
        { ...TOKEN, HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: 'yes' },
        /^HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: expected true or false/,
      ],
      [
        [],
        { ...TOKEN, NODE_MONITOR_PERIOD: '5' },
        /^NODE_MONITOR_PERIOD: expected a duration from 10ms to 24h/,
      ],
      [
        ['--node-status-update-frequency', 'soon'],
        TOKEN,
        /^--node-status-update-frequency: expected a duration/,
      ],
      [['--node-selector', 'a b'], TOKEN, /^--node-selector: expected a label selector/],
    ];
    for (const [argv, env, message] of cases)
      assert.match(problem(argv, env), message, JSON.stringify([argv, env]));
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
      assert.equal(parse([], { ...TOKEN, NODE_SELECTOR: selector }).config.nodeSelector, selector);
    for (const selector of ['!a=b', 'a b', 'a in b', 'pool in (a,b', 'a/b/c=d', 'x=-bad-'])
      assert.match(
        problem([], { ...TOKEN, NODE_SELECTOR: selector }),
        /^NODE_SELECTOR: expected a label selector/,
        selector,
      );
  });
});
