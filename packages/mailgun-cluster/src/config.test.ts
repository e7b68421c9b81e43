import { parseProgram, type Configuration } from '@loopwright/runtime';
import { writeSecretVolume } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { program } from './config.ts';

const valid = {
  MAILGUN_DOMAIN: 'mg.example.com',
  MAILGUN_API_KEY: 'key-abc123',
  MAIL_RECIPIENT: 'ops@example.com',
};

function parse(argv: string[], env: Record<string, string>): Configuration<typeof program.options> {
  const parsed = parseProgram(program, argv, env);
  assert.equal(parsed.action, 'run');
  return parsed;
}

function problem(env: Record<string, string>, argv: string[] = []): string {
  try {
    parseProgram(program, argv, env);
  } catch (error) {
    const { message } = error as Error;
    assert.ok(!message.includes('\n'), message);
    return message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

describe('mailgun-cluster options', () => {
  it('defaults: the US API, 30 s timeout, 30 min settle time, 5 min after a 401; one worker', () => {
    const { config, standard } = parse([], valid);
    assert.equal(config.mailgunDomain, 'mg.example.com');
    assert.equal(config.mailgunApiKey.value(), 'key-abc123');
    assert.equal(config.mailRecipient, 'ops@example.com');
    assert.equal(config.mailgunUrl, 'https://api.mailgun.net');
    assert.equal(config.mailgunTimeout, 30_000);
    assert.equal(config.eventsSettleTime, 1_800_000);
    assert.equal(config.unauthorizedRetryDelay, 300_000);
    assert.equal(standard.workers, 1);
    assert.equal(standard.leaderElectionId, 'mailgun-cluster');
  });

  it('reads Go durations, flags first, and the key from a file', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'mailgun-config-'));
    t.after(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    const keyFile = writeSecretVolume(dir, { 'api-key': 'key-from-file\n' })['api-key'] ?? '';
    const { config } = parse(['--mailgun-timeout=5s', '--mailgun-api-key-file', keyFile], {
      ...valid,
      // The flag wins over the variable holding the key itself.
      MAILGUN_TIMEOUT: '10s',
      MAILGUN_EVENTS_SETTLE_TIME: '1m30s',
      MAILGUN_UNAUTHORIZED_RETRY_DELAY: '1s',
      MAILGUN_URL: 'https://api.eu.mailgun.net/',
    });
    assert.equal(config.mailgunTimeout, 5000);
    assert.equal(config.eventsSettleTime, 90_000);
    assert.equal(config.unauthorizedRetryDelay, 1000);
    assert.equal(config.mailgunUrl, 'https://api.eu.mailgun.net');
    assert.equal(config.mailgunApiKey.value(), 'key-from-file');
    assert.equal(config.mailgunApiKey.source, '--mailgun-api-key-file');
  });

  it('a base URL may carry a path (a proxy), but not the /v3 mailgun.js adds', () => {
    assert.equal(
      parse([], { ...valid, MAILGUN_URL: 'http://127.0.0.1:8080/mailgun/' }).config.mailgunUrl,
      'http://127.0.0.1:8080/mailgun',
    );
    assert.equal(
      parse([], { ...valid, MAILGUN_URL: 'https://example.com/v3proxy' }).config.mailgunUrl,
      'https://example.com/v3proxy',
    );
  });

  it('a bad value is one line naming it, never echoing the key', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ MAILGUN_DOMAIN: '' }, /^--mailgun-domain \/ MAILGUN_DOMAIN: required: the Mailgun sending domain/],
      [{ MAILGUN_DOMAIN: 'not a domain' }, /^MAILGUN_DOMAIN: expected a domain name/],
      [{ MAILGUN_API_KEY: '' }, /^MAILGUN_API_KEY \/ MAILGUN_API_KEY_FILE: required/],
      [
        { MAILGUN_API_KEY_FILE: '/missing' },
        /^MAILGUN_API_KEY_FILE: set either MAILGUN_API_KEY or MAILGUN_API_KEY_FILE/,
      ],
      [{ MAIL_RECIPIENT: 'key-abc123' }, /^MAIL_RECIPIENT: expected an email address, got "key-abc123"$/],
      [{ MAILGUN_URL: 'ftp://x' }, /^MAILGUN_URL: expected an http\(s\) URL/],
      [
        { MAILGUN_URL: 'https://api.mailgun.net/v3' },
        /^MAILGUN_URL: expected an http\(s\) URL without \/v3, such as https:\/\/api.eu.mailgun.net, got "https:\/\/api.mailgun.net\/v3"$/,
      ],
      [
        { MAILGUN_URL: 'http://127.0.0.1:8080/proxy/V3/' },
        /^MAILGUN_URL: expected an http\(s\) URL without \/v3/,
      ],
      [{ MAILGUN_TIMEOUT: '0s' }, /^MAILGUN_TIMEOUT: expected a duration from 1s to 10m/],
      [{ MAILGUN_TIMEOUT: '30' }, /^MAILGUN_TIMEOUT: expected a duration/],
      [
        { MAILGUN_EVENTS_SETTLE_TIME: '10s' },
        /^MAILGUN_EVENTS_SETTLE_TIME: the settle time \(10000 ms\) must exceed the timeout \(30000 ms\)/,
      ],
      [{ WATCH_NAMESPACE: 'a,B' }, /^WATCH_NAMESPACE: expected namespace names/],
    ];
    for (const [override, message] of cases) {
      const text = problem({ ...valid, ...override });
      if (override.MAIL_RECIPIENT === undefined) assert.ok(!text.includes('key-abc123'), text);
      assert.match(text, message, JSON.stringify(override));
    }
  });

  it('offers sharding: off by default, the ring named mailgun-cluster; on, leader election is off', () => {
    const unsharded = parse([], valid).standard;
    assert.deepEqual(
      [unsharded.sharding, unsharded.shardingRing, unsharded.leaderElect],
      [false, 'mailgun-cluster', true],
    );
    const sharded = parse(['--sharding'], valid).standard;
    assert.deepEqual([sharded.sharding, sharded.leaderElect], [true, false]);
    assert.match(
      problem({ ...valid, SHARDING: 'true', LEADER_ELECT: 'true' }),
      /^SHARDING and LEADER_ELECT: /,
    );
  });
});
