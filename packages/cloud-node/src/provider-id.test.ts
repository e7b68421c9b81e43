import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatProviderId, parseProviderId } from './provider-id.ts';

describe('parseProviderId', () => {
  it('only hcloud://<decimal id> is a Hetzner Cloud server', () => {
    assert.deepEqual(parseProviderId('hcloud://4711'), { kind: 'hcloud', serverID: 4711 });
    assert.equal(formatProviderId(4711), 'hcloud://4711');
  });

  it('unset when empty or missing', () => {
    assert.deepEqual(parseProviderId(undefined), { kind: 'unset' });
    assert.deepEqual(parseProviderId(''), { kind: 'unset' });
  });

  it('Robot servers (hrobot://, legacy hcloud://bm-) are recognised and never ours', () => {
    assert.equal(parseProviderId('hrobot://123').kind, 'robot');
    assert.equal(parseProviderId('hcloud://bm-123').kind, 'robot');
  });

  it('anything else is foreign, including malformed hcloud values', () => {
    for (const raw of [
      'aws:///eu-central-1a/i-0abc',
      'kind://docker/kind/node',
      'hcloud://',
      'hcloud://12a',
      'hcloud://-1',
      'hcloud://0',
      'hcloud://007',
      'hcloud://99999999999999999999',
      'HCLOUD://1',
      ' hcloud://1',
    ])
      assert.equal(parseProviderId(raw).kind, 'foreign', raw);
  });
});
