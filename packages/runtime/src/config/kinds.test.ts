import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bindAddress,
  boolean,
  dnsLabel,
  dnsSubdomain,
  duration,
  httpUrl,
  integer,
  labelValue,
  rateOrUnlimited,
  listOf,
  oneOf,
  text,
  type ValueKind,
} from './kinds.ts';

function check<T>(kind: ValueKind<T>, accepted: [string, T][], rejected: string[]): void {
  for (const [raw, value] of accepted)
    assert.deepEqual(kind.parse(raw), value, `accepts ${JSON.stringify(raw)}`);
  for (const raw of rejected) assert.equal(kind.parse(raw), undefined, `rejects ${JSON.stringify(raw)}`);
}

describe('value kinds', () => {
  it('text: anything, or what the pattern and length allow', () => {
    check(text(), [['any thing', 'any thing']], []);
    check(text({ pattern: /^\S+$/, maxLength: 5 }), [['abcde', 'abcde']], ['abcdef', 'a b']);
  });

  it('integer: digits within the range', () => {
    const kind = integer(1, 1000);
    check(
      kind,
      [
        ['1', 1],
        ['1000', 1000],
        ['010', 10],
      ],
      ['0', '1001', '-1', '2.5', '1e3', 'ten', '0x10'],
    );
    assert.equal(kind.expected, 'an integer from 1 to 1000');
  });

  it('rateOrUnlimited: -1 for no limit, else a decimal above 0 and at most max; zero is refused', () => {
    const kind = rateOrUnlimited(100);
    check(
      kind,
      [
        ['-1', -1],
        ['1', 1],
        ['100', 100],
        ['0.5', 0.5],
        ['.5', 0.5],
        ['7.', 7],
        ['99.99', 99.99],
      ],
      ['0', '0.0', '-2', '-0.5', '100.01', '101', '-1.0', ' -1x', 'off', '1e2', '', '.', '1.2.3', '0x10'],
    );
    assert.equal(kind.expected, '-1 (no limit) or a number above 0 and at most 100');
  });

  it("boolean: Go's strconv.ParseBool values, and a flag of it takes no value", () => {
    check(
      boolean,
      ['1', 't', 'T', 'TRUE', 'true', 'True']
        .map((raw): [string, boolean] => [raw, true])
        .concat(['0', 'f', 'F', 'FALSE', 'false', 'False'].map((raw): [string, boolean] => [raw, false])),
      ['yes', 'no', 'on', 'tRUE', '2'],
    );
    assert.equal(boolean.boolean, true);
  });

  it('oneOf: the values in any letter case, given back in theirs', () => {
    check(
      oneOf(['ipv4', 'dualstack']),
      [
        ['ipv4', 'ipv4'],
        ['DualStack', 'dualstack'],
      ],
      ['ipv5', ''],
    );
    assert.equal(oneOf(['json', 'console']).expected, 'one of json, console');
  });

  it('duration: Go durations within the bounds, in milliseconds', () => {
    const kind = duration('10ms', '24h');
    check(
      kind,
      [
        ['10ms', 10],
        ['1m30s', 90_000],
        ['24h', 86_400_000],
      ],
      ['5ms', '24h1s', '5', '0', '-1s'],
    );
    assert.equal(kind.expected, 'a duration from 10ms to 24h, like 1m30s');
    assert.throws(() => duration('1', '1h'), TypeError);
  });

  it('listOf: comma-separated items, trimmed, each once; no empty item; the flag repeats', () => {
    const kind = listOf(dnsLabel, 'namespace names');
    check(
      kind,
      [
        ['a', ['a']],
        ['a, b,a', ['a', 'b']],
      ],
      ['a,,b', 'a,', 'a,Not_A_Name'],
    );
    assert.equal(kind.list, true);
  });

  it('dnsLabel and dnsSubdomain: Kubernetes name rules and lengths', () => {
    check(
      dnsLabel,
      [
        ['kube-system', 'kube-system'],
        ['a'.repeat(63), 'a'.repeat(63)],
      ],
      ['Kube', '-a', 'a-', 'a.b', 'a_b', 'a'.repeat(64)],
    );
    check(
      dnsSubdomain(),
      [
        ['at-scheduler', 'at-scheduler'],
        ['a.b-c.d', 'a.b-c.d'],
        ['a'.repeat(253), 'a'.repeat(253)],
      ],
      ['Bad Lease!', 'a..b', '.a', 'a.', 'a'.repeat(254)],
    );
    check(dnsSubdomain(128), [['a'.repeat(128), 'a'.repeat(128)]], ['a'.repeat(129)]);
  });

  it('labelValue: letters of either case, digits, "-", "_" and "." inside; at most 63', () => {
    check(
      labelValue,
      [
        ['at-scheduler', 'at-scheduler'],
        ['Ring_1.v2', 'Ring_1.v2'],
        ['a'.repeat(63), 'a'.repeat(63)],
      ],
      ['-a', 'a_', '.a', 'a b', 'a/b', 'a'.repeat(64)],
    );
  });

  it('httpUrl: http and https only, without trailing slashes', () => {
    check(
      httpUrl('https://api.example.com'),
      [
        ['https://api.hetzner.cloud/v1/', 'https://api.hetzner.cloud/v1'],
        ['http://127.0.0.1:1', 'http://127.0.0.1:1'],
      ],
      ['ftp://x', '::', 'api.example.com'],
    );
  });

  it("bindAddress: controller-runtime's [host]:port, and 0 for none", () => {
    check(
      bindAddress,
      [
        [':8080', { host: undefined, port: 8080 }],
        ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
        ['[::1]:8081', { host: '::1', port: 8081 }],
        ['localhost:9090', { host: 'localhost', port: 9090 }],
        ['0', false],
      ],
      ['8080', ':', ':65536', ':-1', 'a b:80', ''],
    );
  });
});
