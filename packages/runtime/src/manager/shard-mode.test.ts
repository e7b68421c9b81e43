import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, type ListOptions, type ResourceType } from '@loopwright/client';
import { detectShardMode, type ProbeClient } from './shard-mode.ts';

const WHOLE_SPACE_BY_UID = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";
const CONFIG_MAPS = { group: '', version: 'v1', plural: 'configmaps', namespace: 'ns', labelSelector: 'a=b' };
const ATS = { group: 'loopwright.dev', version: 'v1', plural: 'ats' };

/** A client whose list answers `answer(plural)`: the selector echoed, none, or an error. */
function client(answer: (plural: string) => 'echo' | 'ignore' | Error) {
  const requests: { plural: string; options: ListOptions }[] = [];
  const probe: ProbeClient = {
    resource: (type: ResourceType) => ({
      list: (options: ListOptions) => {
        requests.push({ plural: type.plural, options });
        const result = answer(type.plural);
        if (result instanceof Error) return Promise.reject(result);
        return Promise.resolve(result === 'echo' ? { shardSelector: options.shardSelector ?? '' } : {});
      },
    }),
  };
  return { probe, requests };
}

const signal = new AbortController().signal;

describe('detectShardMode', () => {
  it('is server-side when every scope echoes the whole-space selector of one object', async () => {
    const { probe, requests } = client(() => 'echo');
    const mode = await detectShardMode(
      probe,
      [
        { scope: CONFIG_MAPS, field: 'object.metadata.uid' },
        { scope: ATS, field: 'object.metadata.namespace' },
      ],
      signal,
    );
    assert.equal(mode.kind, 'server-side');
    assert.deepEqual(
      requests.map(({ plural, options }) => ({ plural, ...options, signal: undefined })),
      [
        {
          plural: 'configmaps',
          namespace: 'ns',
          labelSelector: 'a=b',
          limit: 1,
          shardSelector: WHOLE_SPACE_BY_UID,
          signal: undefined,
        },
        {
          plural: 'ats',
          limit: 1,
          shardSelector: WHOLE_SPACE_BY_UID.replace('uid', 'namespace'),
          signal: undefined,
        },
      ],
    );
  });

  it('is in-replica as soon as one answer has no shardInfo (the gate off), naming the resource', async () => {
    const { probe, requests } = client((plural) => (plural === 'ats' ? 'ignore' : 'echo'));
    const mode = await detectShardMode(
      probe,
      [
        { scope: ATS, field: 'object.metadata.uid' },
        { scope: CONFIG_MAPS, field: 'object.metadata.uid' },
      ],
      signal,
    );
    assert.equal(mode.kind, 'in-replica');
    assert.match(
      mode.reason,
      /ignores shardSelector \(feature gate ShardedListAndWatch off\).*ats\.loopwright\.dev/,
    );
    assert.equal(requests.length, 1, 'one answer decides');
  });

  it('is in-replica when a probe fails (e.g. a CRD not installed yet): always correct', async () => {
    const { probe } = client(() => new KubeApiError('ats.loopwright.dev not found'));
    const mode = await detectShardMode(probe, [{ scope: ATS, field: 'object.metadata.uid' }], signal);
    assert.equal(mode.kind, 'in-replica');
    assert.match(mode.reason, /probing shardSelector on ats\.loopwright\.dev failed: .*not found/);
  });

  it('is in-replica, without a request, when no informer can be selected by shard', async () => {
    const { probe, requests } = client(() => 'echo');
    const mode = await detectShardMode(probe, [], signal);
    assert.equal(mode.kind, 'in-replica');
    assert.deepEqual(requests, []);
  });
});
