import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { KubeApiError } from '@loopwright/client';
import { createLogger, createSilentLogger, type LoggerOptions } from './logger.ts';
import { SecretRegistry, isCredentialKey } from './redact.ts';

/** A logger writing into memory; `lines()` waits for winston's async pipeline to flush. */
function capture(options: LoggerOptions = {}): {
  logger: ReturnType<typeof createLogger>;
  lines(): Promise<string[]>;
} {
  const stream = options.stream ?? new PassThrough();
  let output = '';
  stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const logger = createLogger({ format: 'json', secrets: new SecretRegistry(), stream, ...options });
  return {
    logger,
    async lines() {
      await new Promise((resolve) => setImmediate(resolve));
      return output.split('\n').filter((line) => line.length > 0);
    },
  };
}

async function jsonLines(log: ReturnType<typeof capture>): Promise<Record<string, unknown>[]> {
  return (await log.lines()).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('createLogger', () => {
  it('writes JSON lines with timestamp, level, message and child fields', async () => {
    const log = capture();
    log.logger
      .child({ controller: 'at', namespace: 'ns', name: 'x', reconcileID: 'r1' })
      .info('reconciled', { phase: 'Done' });
    const [entry] = await jsonLines(log);
    assert.ok(entry);
    assert.equal(entry.level, 'info');
    assert.equal(entry.message, 'reconciled');
    assert.deepEqual(
      [entry.controller, entry.namespace, entry.name, entry.reconcileID, entry.phase],
      ['at', 'ns', 'x', 'r1', 'Done'],
    );
    assert.match(String(entry.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('logs from its level up, info by default', async () => {
    const log = capture({ level: 'warn' });
    log.logger.info('hidden');
    log.logger.warn('shown');
    assert.deepEqual(
      (await jsonLines(log)).map((e) => e.message),
      ['shown'],
    );
    const byDefault = capture();
    byDefault.logger.debug('hidden');
    byDefault.logger.info('shown');
    assert.deepEqual(
      (await jsonLines(byDefault)).map((e) => e.message),
      ['shown'],
    );
  });

  it('does not even write an entry of a disabled level into winston, from the logger or its children', async () => {
    const counted = (logger: ReturnType<typeof createLogger>): (() => number) => {
      let writes = 0;
      const write = logger.write.bind(logger);
      // A child writes through its parent's write: every entry of the tree passes here.
      logger.write = (info) => {
        writes += 1;
        return write(info);
      };
      return () => writes;
    };
    const log = capture();
    const writes = counted(log.logger);
    const child = log.logger.child({ controller: 'c' }).child({ reconcileID: 'r' });
    child.debug('decided', { action: 'wait' });
    child.debug('one argument');
    log.logger.verbose('root');
    assert.equal(writes(), 0);
    child.info('shown', { action: 'start' });
    log.logger.level = 'debug';
    child.debug('shown too');
    assert.equal(writes(), 2);
    assert.deepEqual(
      (await jsonLines(log)).map((e) => [e.message, e.reconcileID]),
      [
        ['shown', 'r'],
        ['shown too', 'r'],
      ],
    );

    const silent = createSilentLogger();
    const silentWrites = counted(silent);
    silent.child({ controller: 'c' }).error('dropped');
    assert.equal(silentWrites(), 0);
  });

  it('does not even format an entry below its level (reconciles log debug lines at every step)', async () => {
    let redactions = 0;
    const secrets = new (class extends SecretRegistry {
      override redactText(text: string): string {
        redactions += 1;
        return super.redactText(text);
      }
    })();
    // Read through a function: the compiler would take the count for the 0 asserted first.
    const redactionsSoFar = (): number => redactions;
    const log = capture({ secrets });
    log.logger.child({ controller: 'c' }).debug('decided', { action: 'wait' });
    assert.equal(redactionsSoFar(), 0);
    log.logger.level = 'debug';
    log.logger.child({ controller: 'c' }).debug('decided', { action: 'wait' });
    assert.notEqual(redactionsSoFar(), 0, 'a level changed later applies');
    assert.deepEqual(
      (await jsonLines(log)).map((e) => e.message),
      ['decided'],
    );
  });

  it('chooses JSON for a non-TTY stream and console for a TTY unless the format is given', async () => {
    const plain = capture({ format: undefined });
    plain.logger.info('x');
    const plainLine = (await plain.lines())[0] ?? '';
    assert.doesNotThrow(() => JSON.parse(plainLine));

    const ttyStream = Object.assign(new PassThrough(), { isTTY: true });
    const tty = capture({ format: undefined, stream: ttyStream });
    tty.logger.info('hello', { controller: 'at' });
    assert.match((await tty.lines())[0] ?? '', /INFO.*hello.*controller=/);

    const forced = capture({
      format: 'json',
      stream: Object.assign(new PassThrough(), { isTTY: true }),
    });
    forced.logger.info('x');
    const forcedLine = (await forced.lines())[0] ?? '';
    assert.doesNotThrow(() => JSON.parse(forcedLine));
  });

  it('console format: one line, reconcile fields first, values with spaces quoted', async () => {
    const log = capture({ format: 'console' });
    log.logger
      .child({ reconcileID: 'r', name: 'n', namespace: 'ns', controller: 'c' })
      .info('two\nlines', { detail: 'a b' });
    const lines = await log.lines();
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /two\\nlines controller=c namespace=ns name=n reconcileID=r detail="a b"$/);
    assert.doesNotMatch(
      lines[0] ?? '',
      new RegExp(String.fromCharCode(27)),
      'no colours when not writing to a terminal',
    );
  });

  it('keeps error message, stack and Kubernetes fields in JSON', async () => {
    const log = capture();
    const error = new KubeApiError('ats.example.com "x" not found', { status: 404, reason: 'NotFound' });
    log.logger.error('get failed', { error });
    log.logger.error(new Error('thrown directly'));
    const [first, second] = await jsonLines(log);
    const logged = first?.error as Record<string, unknown>;
    assert.equal(logged.message, 'ats.example.com "x" not found');
    assert.equal(logged.status, 404);
    assert.equal(logged.reason, 'NotFound');
    assert.match(String(logged.stack), /KubeApiError/);
    assert.equal(second?.message, 'thrown directly');
    assert.match(String((second.error as Record<string, unknown>).stack), /thrown directly/);
  });
});

describe('redaction', () => {
  it('replaces registered secrets anywhere in message and metadata, in JSON and console output', async () => {
    for (const format of ['json', 'console'] as const) {
      const secrets = new SecretRegistry();
      secrets.register('s3cr3t-api-key');
      const log = capture({ format, secrets });
      log.logger.child({ controller: 'mailgun' }).warn('call with s3cr3t-api-key failed', {
        url: 'https://api:s3cr3t-api-key@api.mailgun.net/v3',
        nested: { list: ['x', 'prefix-s3cr3t-api-key-suffix'] },
        error: new Error('401 for key s3cr3t-api-key'),
      });
      const [line] = await log.lines();
      assert.ok(line);
      assert.doesNotMatch(line, /s3cr3t-api-key/, format);
      assert.match(line, /\[REDACTED\]/);
    }
  });

  it('redacts the value of credential-named keys, but not references to credentials', async () => {
    const log = capture();
    log.logger.info('config', {
      token: 'abc',
      apiKey: 'k1',
      api_key: 'k2',
      password: 'p',
      Authorization: 'Bearer xyz',
      headers: { authorization: 'Basic Zm9v', 'x-request-id': 'id' },
      clientSecret: 'cs',
      tokenFile: '/var/run/secrets/token',
      secretName: 'mailgun-credentials',
    });
    const [entry] = await jsonLines(log);
    assert.ok(entry);
    for (const key of ['token', 'apiKey', 'api_key', 'password', 'Authorization', 'clientSecret'])
      assert.equal(entry[key], '[REDACTED]', key);
    assert.deepEqual(entry.headers, { authorization: '[REDACTED]', 'x-request-id': 'id' });
    assert.equal(entry.tokenFile, '/var/run/secrets/token');
    assert.equal(entry.secretName, 'mailgun-credentials');
  });

  it('a secret registered after the logger was created is redacted too; short values are ignored', async () => {
    const secrets = new SecretRegistry();
    const log = capture({ secrets });
    secrets.register('late-secret-value');
    secrets.register('ab');
    log.logger.info('late-secret-value ab');
    assert.equal((await jsonLines(log))[0]?.message, '[REDACTED] ab');
  });

  it('redacts credentials by their shape, registered or not: Basic, Bearer, JWT; prose stays', async () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl';
    const log = capture({ secrets: new SecretRegistry() });
    log.logger.warn('Mailgun 400: echoed Authorization: Basic YXBpOmtleS0xMjM=', {
      detail: `bearer hc_T0k3nV4lu3 and ${jwt}`,
      prose: 'Basic authentication failed; Bearer token expired',
    });
    const [entry] = await jsonLines(log);
    assert.equal(entry?.message, 'Mailgun 400: echoed Authorization: Basic [REDACTED]');
    assert.equal(entry.detail, 'bearer [REDACTED] and [REDACTED]');
    assert.equal(entry.prose, 'Basic authentication failed; Bearer token expired');
  });

  it('handles circular metadata without throwing', async () => {
    const log = capture();
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    log.logger.info('loop', { loop });
    assert.deepEqual((await jsonLines(log))[0]?.loop, { a: 1, self: '[Circular]' });
  });

  it('isCredentialKey', () => {
    for (const key of [
      'token',
      'bearerToken',
      'access_token',
      'PASSWORD',
      'apiKey',
      'api-key',
      'authorization',
      'Set-Cookie',
      'credentials',
      'clientSecret',
    ]) {
      assert.equal(isCredentialKey(key), true, key);
    }
    for (const key of ['tokenFile', 'secretName', 'name', 'keyID', 'passwordPolicy'])
      assert.equal(isCredentialKey(key), false, key);
  });
});
