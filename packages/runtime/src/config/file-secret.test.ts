import { writeSecretVolume } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { globalSecrets } from '../log/redact.ts';
import { ConfigError } from './config-error.ts';
import { FileSecret, fixedSecret, type SecretReload } from './file-secret.ts';

const root = mkdtempSync(join(tmpdir(), 'file-secret-test-'));
after(() => {
  rmSync(root, { recursive: true, force: true });
});
let volumes = 0;
const noSpace = (value: string): boolean => !/\s/.test(value);

function secretIn(files: Record<string, string>): {
  dir: string;
  secret: FileSecret;
  reloads: SecretReload[];
} {
  const dir = join(root, `volume-${volumes++}`);
  const path = writeSecretVolume(dir, files).key ?? '';
  const secret = new FileSecret({
    path,
    source: 'API_KEY_FILE',
    expected: 'a key without spaces',
    valid: noSpace,
  });
  const reloads: SecretReload[] = [];
  secret.observe((reload) => reloads.push(reload));
  return { dir, secret, reloads };
}

describe('FileSecret', () => {
  it('reads the file at start, trimmed, and registers the value for redaction', () => {
    const { secret } = secretIn({ key: 'key-start-0001\n' });
    assert.equal(secret.value(), 'key-start-0001');
    assert.equal(globalSecrets.redactText('x key-start-0001 y'), 'x [REDACTED] y');
  });

  it("follows the kubelet's atomic ..data swap: the new value at the next call, reported once", () => {
    const { dir, secret, reloads } = secretIn({ key: 'key-before-0002' });
    writeSecretVolume(dir, { key: 'key-after-0002\n' });
    assert.equal(secret.value(), 'key-after-0002');
    assert.equal(secret.value(), 'key-after-0002');
    assert.deepEqual(reloads, [{ outcome: 'reloaded', source: 'API_KEY_FILE', path: join(dir, 'key') }]);
    assert.equal(globalSecrets.redactText('key-after-0002'), '[REDACTED]');
  });

  it('follows a file rewritten in place', () => {
    const dir = join(root, 'plain');
    writeSecretVolume(dir, {});
    const path = join(dir, 'plain-key');
    writeFileSync(path, 'key-plain-0003');
    const secret = new FileSecret({ path, source: '--api-key-file', expected: 'a key', valid: noSpace });
    writeFileSync(path, 'key-plain-0003-longer');
    assert.equal(secret.value(), 'key-plain-0003-longer');
  });

  it('an update without a usable value keeps the last good one, reported once per change', () => {
    const { dir, secret, reloads } = secretIn({ key: 'key-good-0004' });
    writeSecretVolume(dir, { key: '  \n' });
    assert.equal(secret.value(), 'key-good-0004');
    assert.equal(secret.value(), 'key-good-0004');
    writeSecretVolume(dir, { key: 'has a space' });
    assert.equal(secret.value(), 'key-good-0004');
    writeSecretVolume(dir, { key: 'key-fixed-0004' });
    assert.equal(secret.value(), 'key-fixed-0004');
    const path = join(dir, 'key');
    assert.deepEqual(reloads, [
      { outcome: 'failed', source: 'API_KEY_FILE', path, problem: `"${path}" is empty` },
      {
        outcome: 'failed',
        source: 'API_KEY_FILE',
        path,
        problem: `"${path}" does not hold a key without spaces`,
      },
      { outcome: 'reloaded', source: 'API_KEY_FILE', path },
    ]);
    assert.ok(!JSON.stringify(reloads).includes('has a space'), 'a rejected value is never echoed');
  });

  it('a file that gives no value at start is a ConfigError naming the source, never the value', () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{}, 'missing', /^API_KEY_FILE: cannot read ".*missing": ENOENT$/],
      // Unreadable (a directory: EISDIR, as a file without permission gives EACCES).
      [{ key: 'k' }, '', /^API_KEY_FILE: cannot read ".*volume-\d+": EISDIR$/],
      [{ key: '\n' }, 'key', /^API_KEY_FILE: ".*key" is empty$/],
      [{ key: 'two words' }, 'key', /^API_KEY_FILE: ".*key" does not hold a key without spaces$/],
    ];
    for (const [files, name, message] of cases) {
      const dir = join(root, `volume-${volumes++}`);
      writeSecretVolume(dir, files);
      assert.throws(
        () =>
          new FileSecret({
            path: join(dir, name),
            source: 'API_KEY_FILE',
            expected: 'a key without spaces',
            valid: noSpace,
          }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.option === 'API_KEY_FILE' &&
          message.test(error.message) &&
          !error.message.includes('two words'),
      );
    }
  });
});

describe('fixedSecret', () => {
  it('is the value it was given, registered for redaction', () => {
    const secret = fixedSecret('key-fixed-0005', 'API_KEY');
    assert.equal(secret.value(), 'key-fixed-0005');
    assert.equal(secret.source, 'API_KEY');
    assert.equal(globalSecrets.redactText('key-fixed-0005'), '[REDACTED]');
  });
});
