import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, type ListOptions, type ResourceType } from '@loopwright/client';
import { detectShardMode, memberLeaseScope, type ProbeClient } from './shard-mode.ts';

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

const GATE = memberLeaseScope('system', 'ring');

describe('detectShardMode', () => {
  it("is server-side when the member Leases' list echoes the whole-space selector and every scope answers", async () => {
    // Custom resources are filtered but their lists carry no shardInfo (kube-apiserver 1.36.3).
    const { probe, requests } = client((plural) => (plural === 'ats' ? 'ignore' : 'echo'));
    const mode = await detectShardMode(
      probe,
      {
        gate: GATE,
        probes: [
          { scope: CONFIG_MAPS, field: 'object.metadata.uid' },
          { scope: ATS, field: 'object.metadata.namespace' },
        ],
      },
      signal,
    );
    assert.equal(mode.kind, 'server-side');
    assert.match(mode.reason, /shardInfo in the list of leases\.coordination\.k8s\.io.*configmaps, ats/);
    assert.deepEqual(
      requests.map(({ plural, options }) => ({ plural, ...options, signal: undefined })),
      [
        {
          plural: 'leases',
          namespace: 'system',
          labelSelector: 'sharding.loopwright.dev/ring=ring',
          limit: 1,
          shardSelector: WHOLE_SPACE_BY_UID,
          signal: undefined,
        },
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

  it("is in-replica when the member Leases' list has no shardInfo (the gate off), without probing further", async () => {
    const { probe, requests } = client((plural) => (plural === 'leases' ? 'ignore' : 'echo'));
    const mode = await detectShardMode(
      probe,
      { gate: GATE, probes: [{ scope: CONFIG_MAPS, field: 'object.metadata.uid' }] },
      signal,
    );
    assert.equal(mode.kind, 'in-replica');
    assert.match(
      mode.reason,
      /ignores shardSelector \(feature gate ShardedListAndWatch off\).*leases\.coordination\.k8s\.io/,
    );
    assert.equal(requests.length, 1, 'the gate decides');
  });

  it('is in-replica when a probe fails (e.g. a CRD not installed yet): always correct', async () => {
    const { probe } = client((plural) =>
      plural === 'ats' ? new KubeApiError('ats.loopwright.dev not found') : 'echo',
    );
    const mode = await detectShardMode(
      probe,
      { gate: GATE, probes: [{ scope: ATS, field: 'object.metadata.uid' }] },
      signal,
    );
    assert.equal(mode.kind, 'in-replica');
    assert.match(mode.reason, /probing shardSelector on ats\.loopwright\.dev failed: .*not found/);
  });

  it('is in-replica when the gate probe itself fails (the Leases may not be listed)', async () => {
    const { probe } = client((plural) => (plural === 'leases' ? new KubeApiError('forbidden') : 'echo'));
    const mode = await detectShardMode(
      probe,
      { gate: GATE, probes: [{ scope: ATS, field: 'object.metadata.uid' }] },
      signal,
    );
    assert.equal(mode.kind, 'in-replica');
    assert.match(mode.reason, /probing shardSelector on leases\.coordination\.k8s\.io failed: forbidden/);
  });

  it('is in-replica, without a request, when no informer can be selected by shard', async () => {
    const { probe, requests } = client(() => 'echo');
    const mode = await detectShardMode(probe, { gate: GATE, probes: [] }, signal);
    assert.equal(mode.kind, 'in-replica');
    assert.deepEqual(requests, []);
  });
});
