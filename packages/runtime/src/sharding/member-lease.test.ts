import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isConflict, KubeApiError, KubeApiFailure } from '@loopwright/client';
import type { LeaderElectionRecord } from '@loopwright/leader-election';
import { hashHex } from './hash.ts';
import { HOLDINGS_ANNOTATION } from './holdings.ts';
import { MemoryLeaseStore } from './lease-store.test-support.ts';
import {
  decodeMemberLease,
  memberContent,
  memberLeaseName,
  MemberLeases,
  type LeaseObject,
  RING_LABEL,
} from './member-lease.ts';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const signal = new AbortController().signal;
/** 2026-01-01T00:00:00.123456Z */
const MICROS = Date.UTC(2026, 0, 1) * 1000 + 123_456;
const RECORD: LeaderElectionRecord = {
  holderIdentity: 'pod-0',
  leaseDurationSeconds: 15,
  acquireTime: MICROS,
  renewTime: MICROS,
  leaseTransitions: 0,
};

describe('memberLeaseName', () => {
  it('is <ring>-<identity> when that is a valid Lease name', () => {
    assert.equal(
      memberLeaseName('at-scheduler', 'at-scheduler-7d9f8-x2x4q'),
      'at-scheduler-at-scheduler-7d9f8-x2x4q',
    );
    assert.equal(memberLeaseName('ring', 'node.example.com'), 'ring-node.example.com');
  });

  it('sanitises an invalid identity and adds the hash of the original, so that no two collide', () => {
    const upper = memberLeaseName('ring', 'Host_1');
    const lower = memberLeaseName('ring', 'host-1');
    assert.equal(upper, `ring-host-1-${hashHex('ring-Host_1')}`);
    assert.equal(lower, 'ring-host-1');
    assert.notEqual(memberLeaseName('ring', 'a_b'), memberLeaseName('ring', 'a.b_'));
    for (const name of [
      upper,
      memberLeaseName('Ring', 'x'),
      memberLeaseName('ring', 'a..b'),
      memberLeaseName('r', '_-_'),
    ]) {
      assert.match(name, SUBDOMAIN);
    }
    assert.equal(memberLeaseName('r', '___'), `r-${hashHex('r-___')}`);
  });

  it('cuts a long identity to 253 characters, hash included', () => {
    const long = memberLeaseName('ring', 'a'.repeat(300));
    assert.equal(long.length, 253);
    assert.match(long, SUBDOMAIN);
    assert.ok(long.endsWith(`-${hashHex(`ring-${'a'.repeat(300)}`)}`));
    assert.notEqual(long, memberLeaseName('ring', 'a'.repeat(301)));
    // Exactly 253 valid characters stay as they are.
    assert.equal(memberLeaseName('ring', 'b'.repeat(248)).length, 253);
    assert.equal(memberLeaseName('ring', 'b'.repeat(248)), `ring-${'b'.repeat(248)}`);
  });
});

describe('decodeMemberLease', () => {
  it("reads client-go's spec, MicroTime included, and the holdings annotation", () => {
    const lease = decodeMemberLease(
      {
        metadata: { name: 'n', resourceVersion: '7', annotations: { [HOLDINGS_ANNOTATION]: '0-3' } },
        spec: {
          holderIdentity: 'pod-0',
          leaseDurationSeconds: 15,
          acquireTime: '2026-01-01T00:00:00.123456Z',
          renewTime: '2026-01-01T00:00:00.123456Z',
          leaseTransitions: 2,
        },
      },
      'GET',
    );
    assert.deepEqual(lease.record, { ...RECORD, leaseTransitions: 2 });
    assert.equal(lease.name, 'n');
    assert.equal(lease.resourceVersion, '7');
    assert.equal(lease.holdings, '0-3');
  });

  it("takes client-go's defaults for absent fields, and no annotation as unknown holdings", () => {
    const lease = decodeMemberLease({}, 'GET');
    assert.deepEqual(lease.record, {
      holderIdentity: '',
      leaseDurationSeconds: 0,
      acquireTime: undefined,
      renewTime: undefined,
      leaseTransitions: 0,
    });
    assert.equal(lease.name, '');
    assert.equal(lease.resourceVersion, '');
    assert.equal(lease.holdings, undefined);
  });

  it('refuses a field of the wrong type or a malformed timestamp as a decode failure', () => {
    for (const spec of [{ holderIdentity: 3 }, { leaseDurationSeconds: '15' }, { renewTime: 'yesterday' }]) {
      assert.throws(
        // As the server might send them: JSON the types do not describe.
        () => decodeMemberLease({ metadata: { name: 'n' }, spec } as LeaseObject, 'PUT'),
        (error: unknown) =>
          error instanceof KubeApiError && error.failure === KubeApiFailure.Decode && error.method === 'PUT',
      );
    }
  });
});

describe('memberContent', () => {
  it('changes with every field of the record and with the holdings, not with the resourceVersion', () => {
    const base = decodeMemberLease({ metadata: { resourceVersion: '1' }, spec: {} }, 'GET');
    const contents = new Set(
      [
        base,
        { ...base, resourceVersion: '2' },
        { ...base, holdings: '' },
        { ...base, holdings: '1' },
        { ...base, record: { ...base.record, holderIdentity: 'x' } },
        { ...base, record: { ...base.record, leaseDurationSeconds: 1 } },
        { ...base, record: { ...base.record, acquireTime: 1 } },
        { ...base, record: { ...base.record, renewTime: 1 } },
        { ...base, record: { ...base.record, leaseTransitions: 1 } },
      ].map(memberContent),
    );
    assert.equal(contents.size, 8);
  });
});

describe('MemberLeases', () => {
  it('creates a labelled Lease with the spec as client-go writes it and the holdings annotation', async () => {
    const store = new MemoryLeaseStore();
    const leases = new MemberLeases(store.api('pod-0'), 'ns', 'ring');
    const created = await leases.create('ring-pod-0', RECORD, '0-9', signal);
    const stored = store.get('ring-pod-0');
    assert.ok(stored?.metadata);
    assert.deepEqual(stored.metadata.labels, { [RING_LABEL]: 'ring' });
    assert.deepEqual(stored.metadata.annotations, { [HOLDINGS_ANNOTATION]: '0-9' });
    assert.equal(stored.metadata.namespace, 'ns');
    assert.deepEqual(stored.spec, {
      holderIdentity: 'pod-0',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.123456Z',
      renewTime: '2026-01-01T00:00:00.123456Z',
      leaseTransitions: 0,
    });
    assert.equal(created.resourceVersion, stored.metadata.resourceVersion);
    assert.equal(created.holdings, '0-9');

    const bare = await leases.create(
      'ring-bare',
      { ...RECORD, acquireTime: undefined, renewTime: undefined },
      '',
      signal,
    );
    assert.deepEqual(Object.keys(bare.object.spec ?? {}), [
      'holderIdentity',
      'leaseDurationSeconds',
      'leaseTransitions',
    ]);
  });

  it("updates at the base's version, keeping metadata and spec fields it does not know, and restoring the label", async () => {
    const store = new MemoryLeaseStore();
    const leases = new MemberLeases(store.api('pod-0'), 'ns', 'ring');
    const created = await leases.create('ring-pod-0', RECORD, '', signal);
    const edited = store.get('ring-pod-0');
    assert.ok(edited?.metadata && edited.spec);
    edited.metadata.labels = { team: 'x' };
    edited.metadata.annotations = { note: 'kept', [HOLDINGS_ANNOTATION]: '' };
    edited.spec.strategy = 'Future';
    store.update(edited, 'someone');

    await assert.rejects(leases.update(created, RECORD, '1', signal), isConflict);
    const unlabelled = store.get('ring-pod-0');
    assert.ok(unlabelled);
    assert.deepEqual(await leases.list(signal), []);
    const current = decodeMemberLease(unlabelled, 'GET');
    const renewed = await leases.update(current, { ...RECORD, renewTime: MICROS + 1 }, '1', signal);
    const stored = store.get('ring-pod-0');
    assert.ok(stored?.metadata && stored.spec);
    assert.deepEqual(stored.metadata.labels, { team: 'x', [RING_LABEL]: 'ring' });
    assert.deepEqual(stored.metadata.annotations, { note: 'kept', [HOLDINGS_ANNOTATION]: '1' });
    assert.equal(stored.spec.strategy, 'Future');
    assert.equal(stored.spec.renewTime, '2026-01-01T00:00:00.123457Z');
    assert.equal(renewed.resourceVersion, stored.metadata.resourceVersion);
  });

  it("lists only its ring's Leases", async () => {
    const store = new MemoryLeaseStore();
    await new MemberLeases(store.api('a'), 'ns', 'ring').create('ring-a', RECORD, '', signal);
    await new MemberLeases(store.api('b'), 'ns', 'other').create('other-b', RECORD, '', signal);
    const names = (await new MemberLeases(store.api('c'), 'ns', 'ring').list(signal)).map(({ name }) => name);
    assert.deepEqual(names, ['ring-a']);
  });

  it('deletes only at the version it read', async () => {
    const store = new MemoryLeaseStore();
    const leases = new MemberLeases(store.api('a'), 'ns', 'ring');
    const created = await leases.create('ring-a', RECORD, '', signal);
    const renewed = await leases.update(created, RECORD, '', signal);
    await assert.rejects(leases.delete(created, signal), isConflict);
    assert.equal(await leases.delete(renewed, signal), true);
    assert.equal(await leases.delete(renewed, signal), false);
    assert.deepEqual(store.names(), []);
  });
});
