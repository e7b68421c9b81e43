import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fnv1a64, hashHex } from './hash.ts';

describe('fnv1a64', () => {
  it('matches the published FNV-1a 64 test vectors', () => {
    assert.equal(fnv1a64(''), 0xcbf29ce484222325n);
    assert.equal(fnv1a64('a'), 0xaf63dc4c8601ec8cn);
    assert.equal(fnv1a64('foobar'), 0x85944171f73967e8n);
  });

  it('stays an unsigned 64-bit value', () => {
    for (const text of ['', 'a', 'foobar', 'x'.repeat(1000)]) {
      const hash = fnv1a64(text);
      assert.ok(hash >= 0n && hash < 1n << 64n, text);
    }
  });

  it('hashes a lone surrogate as U+FFFD, the character Go decodes it to', () => {
    assert.equal(fnv1a64('a\ud800b'), fnv1a64('a\ufffdb'));
  });
});

describe('hashHex', () => {
  it('agrees with Go hash/fnv New64a formatted %016x', () => {
    // Computed once with a Go 1.26 program: fnv.New64a(), Write([]byte(s)), fmt.Sprintf("%016x", Sum64()).
    const fromGo: [string, string][] = [
      ['', 'cbf29ce484222325'],
      ['a', 'af63dc4c8601ec8c'],
      ['foobar', '85944171f73967e8'],
      ['3f2b8c1e-6d4a-4f7b-9e2c-1a5d8b0c7e91', 'b2820180bb2b3cba'],
      ['00000000-0000-0000-0000-000000000000', '7c384c6218f299f1'],
      ['c0ffee00-1234-4abc-8def-0123456789ab', '5732f1811183257d'],
      ['kube-system', 'df65c7bc1d82b35e'],
      // Non-ASCII, written as escapes: 'über-namespace', four CJK characters, and an astral-plane emoji
      // (a surrogate pair in JavaScript, four UTF-8 bytes in Go).
      ['\u00fcber-namespace', '60efb7da2a660945'],
      ['\u540d\u524d\u7a7a\u9593', 'af072ed15de92c4a'],
      ['emoji-\u{1f980}', '1d537182bea030a3'],
    ];
    for (const [text, expected] of fromGo) assert.equal(hashHex(text), expected, JSON.stringify(text));
  });

  it('pads to 16 digits when the hash has leading zeros', () => {
    // A value below 2^60 must still be written with 16 digits, as %016x does; search a few strings for one.
    let text = '';
    for (let i = 0; fnv1a64(text) >= 1n << 60n; i++) text = `uid-${i}`;
    const hex = hashHex(text);
    assert.match(hex, /^0[0-9a-f]{15}$/);
    assert.equal(BigInt(`0x${hex}`), fnv1a64(text));
  });
});
