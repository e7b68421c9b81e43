import { variablesRead } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, VARIABLES, parseConfig } from './config.ts';

const valid = {
  MAILGUN_DOMAIN: 'mg.example.com',
  MAILGUN_API_KEY: 'key-abc123',
  MAIL_RECIPIENT: 'ops@example.com',
  LEADER_ELECTION: 'false',
};

function errorFor(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error;
  }
  assert.fail('expected a ConfigError');
}

describe('parseConfig', () => {
  it('applies the documented defaults', () => {
    const config = parseConfig(valid);
    assert.equal(config.mailgun.url, 'https://api.mailgun.net');
    assert.equal(config.mailgun.timeoutMs, 30_000);
    assert.equal(config.mailgun.eventsSettleMs, 1_800_000);
    assert.equal(config.workers, 1);
    assert.equal(config.healthPort, 8080);
    assert.equal(config.watchNamespace, undefined);
    assert.equal(config.leaderElection, undefined);
    assert.equal(config.unauthorizedRetryMs, 300_000);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.logFormat, undefined);
  });

  it('reads the log level and format', () => {
    const config = parseConfig({ ...valid, LOG_LEVEL: 'Debug', LOG_FORMAT: 'json' });
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.logFormat, 'json');
  });

  it('reads the key from MAILGUN_API_KEY_FILE, trimming the trailing newline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailgun-config-'));
    writeFileSync(join(dir, 'key'), 'key-from-file\n');
    const rest: Record<string, string> = { ...valid };
    delete rest.MAILGUN_API_KEY;
    assert.equal(
      parseConfig({ ...rest, MAILGUN_API_KEY_FILE: join(dir, 'key') }).mailgun.apiKey,
      'key-from-file',
    );
    assert.equal(
      errorFor({ ...rest, MAILGUN_API_KEY_FILE: join(dir, 'missing') }).variable,
      'MAILGUN_API_KEY_FILE',
    );
    assert.equal(
      errorFor({ ...valid, MAILGUN_API_KEY_FILE: join(dir, 'key') }).variable,
      'MAILGUN_API_KEY_FILE',
    );
  });

  it('leader election needs a namespace, from LEADER_ELECTION_NAMESPACE or POD_NAMESPACE', () => {
    assert.equal(errorFor({ ...valid, LEADER_ELECTION: 'true' }).variable, 'LEADER_ELECTION_NAMESPACE');
    assert.deepEqual(
      parseConfig({ ...valid, LEADER_ELECTION: 'true', POD_NAMESPACE: 'capi-system' }).leaderElection,
      {
        namespace: 'capi-system',
        leaseName: 'mailgun-cluster-controller',
      },
    );
  });

  const bad: [string, Record<string, string>][] = [
    ['MAILGUN_DOMAIN', { MAILGUN_DOMAIN: '' }],
    ['MAILGUN_DOMAIN', { MAILGUN_DOMAIN: 'not a domain' }],
    ['MAILGUN_API_KEY', { MAILGUN_API_KEY: '' }],
    ['MAIL_RECIPIENT', { MAIL_RECIPIENT: '' }],
    ['MAIL_RECIPIENT', { MAIL_RECIPIENT: 'ops' }],
    ['MAILGUN_URL', { MAILGUN_URL: 'ftp://x' }],
    ['MAILGUN_URL', { MAILGUN_URL: '::' }],
    ['MAILGUN_TIMEOUT_SECONDS', { MAILGUN_TIMEOUT_SECONDS: '0' }],
    ['MAILGUN_EVENTS_SETTLE_SECONDS', { MAILGUN_EVENTS_SETTLE_SECONDS: '10', MAILGUN_TIMEOUT_SECONDS: '30' }],
    ['WORKERS', { WORKERS: 'two' }],
    ['HEALTH_PORT', { HEALTH_PORT: '70000' }],
    ['WATCH_NAMESPACE', { WATCH_NAMESPACE: 'a,b' }],
    ['LEADER_ELECTION', { LEADER_ELECTION: 'maybe' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['LOG_FORMAT', { LOG_FORMAT: 'xml' }],
  ];
  for (const [variable, override] of bad) {
    it(`rejects ${JSON.stringify(override)} naming ${variable}`, () => {
      const error = errorFor({ ...valid, ...override });
      assert.equal(error.variable, variable);
      assert.ok(error.message.startsWith(`${variable}: `));
      assert.doesNotMatch(error.message, /\n/);
    });
  }

  it('never echoes the API key in an error', () => {
    const error = errorFor({ ...valid, MAIL_RECIPIENT: 'key-abc123' });
    assert.equal(error.variable, 'MAIL_RECIPIENT');
    assert.equal(errorFor({ ...valid, WORKERS: '0' }).message.includes('key-abc123'), false);
  });
});

describe('VARIABLES (the --help table)', () => {
  // Leader election at its default (on), which needs a namespace.
  const leaderElected: Record<string, string> = {
    ...Object.fromEntries(Object.entries(valid).filter(([name]) => name !== 'LEADER_ELECTION')),
    POD_NAMESPACE: 'capi-system',
  };

  it('lists exactly the variables parseConfig reads', () => {
    assert.deepEqual(
      variablesRead((env) => parseConfig(env), valid, leaderElected),
      VARIABLES.map((variable) => variable.name).sort(),
    );
  });

  it('every documented default behaves exactly like leaving the variable unset', () => {
    const withDefaults = VARIABLES.filter((variable) => variable.default !== undefined);
    assert.ok(withDefaults.length > 0);
    for (const { name, default: value = '' } of withDefaults) {
      assert.ok(!(name in leaderElected), name);
      assert.deepEqual(parseConfig({ ...leaderElected, [name]: value }), parseConfig(leaderElected), name);
    }
  });

  it('one line per variable', () => {
    for (const { name, description } of VARIABLES) assert.match(description, /^[^\n]+$/, name);
  });
});
