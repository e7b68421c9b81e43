import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringInterner } from './intern.ts';
import { sameHeapObject } from './v8-internals.test-support.ts';
import type { KubeObject } from '@loopwright/client';

/** Two equal strings that are two copies, as two decoded API responses carry them. */
function twoCopies(value: string): [string, string] {
  const [a, b] = JSON.parse(JSON.stringify([value, value])) as [string, string];
  assert.ok(!sameHeapObject(a, b), 'JSON.parse gives each value a copy of its own');
  return [a, b];
}

/** A Pod as the API server sends it (each call decodes anew: no string shared with another call). */
const pod = (name: string): KubeObject =>
  JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        generateName: 'web-7d4b9c8f6d-',
        namespace: 'production-apps',
        uid: `uid-of-the-pod-${name}`,
        labels: { 'app.kubernetes.io/name': 'storefront-web', 'pod-template-hash': '7d4b9c8f6d' },
        annotations: { 'example.com/checksum': 'sha256-of-the-configuration' },
        finalizers: ['example.com/cleanup-finalizer'],
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web-7d4b9c8f6d',
            uid: 'uid-of-the-replicaset',
            controller: true,
          },
        ],
      },
    }),
  ) as KubeObject;

describe('StringInterner', () => {
  it('returns the first copy seen for every equal string', () => {
    const interner = new StringInterner();
    const [a, b] = twoCopies('production-apps');
    assert.ok(sameHeapObject(interner.intern(a), a));
    assert.ok(sameHeapObject(interner.intern(b), a));
    const [c] = twoCopies('other-namespace');
    assert.ok(sameHeapObject(interner.intern(c), c));
  });

  it('starts over once it holds its capacity of distinct strings', () => {
    const interner = new StringInterner(2);
    const [first, again] = twoCopies('namespace-one');
    interner.intern(first);
    interner.intern('namespace-two');
    interner.intern('namespace-three'); // a third distinct string: the table starts over
    assert.ok(sameHeapObject(interner.intern(again), again), 'forgotten: the next copy is the one kept');
    const [, later] = twoCopies('namespace-one');
    assert.ok(sameHeapObject(interner.intern(later), again));
  });

  it('shares the strings objects of one resource have in common, and leaves their values equal', () => {
    const interner = new StringInterner();
    const a = interner.internObject(pod('web-7d4b9c8f6d-aaaaa'));
    const b = interner.internObject(pod('web-7d4b9c8f6d-bbbbb'));
    assert.deepEqual(b, pod('web-7d4b9c8f6d-bbbbb'));
    const shared = (path: (obj: KubeObject) => string | undefined): boolean =>
      sameHeapObject(path(a), path(b));
    assert.ok(shared((o) => o.metadata?.namespace));
    assert.ok(shared((o) => o.metadata?.generateName));
    assert.ok(shared((o) => o.metadata?.labels?.['app.kubernetes.io/name']));
    assert.ok(shared((o) => o.metadata?.labels?.['pod-template-hash']));
    assert.ok(shared((o) => o.metadata?.finalizers?.[0]));
    assert.ok(shared((o) => o.metadata?.ownerReferences?.[0]?.apiVersion));
    assert.ok(shared((o) => o.metadata?.ownerReferences?.[0]?.kind));
    assert.ok(shared((o) => o.metadata?.ownerReferences?.[0]?.name));
    assert.ok(shared((o) => o.metadata?.ownerReferences?.[0]?.uid));
    // Short strings are one already (V8 internalizes them while parsing); these are the ones the
    // interner must not miss when they are long, as a CRD's group/version and kind often are.
    const crd = (): KubeObject =>
      JSON.parse('{"apiVersion":"cnat.loopwright.dev/v1alpha1","kind":"MailgunMachine"}') as KubeObject;
    const [x, y] = [interner.internObject(crd()), interner.internObject(crd())];
    assert.ok(sameHeapObject(x.apiVersion, y.apiVersion));
    assert.ok(sameHeapObject(x.kind, y.kind));
  });

  it('leaves unique strings and annotation values alone', () => {
    const interner = new StringInterner();
    const a = interner.internObject(pod('web-7d4b9c8f6d-aaaaa'));
    const b = interner.internObject(pod('web-7d4b9c8f6d-aaaaa'));
    assert.ok(!sameHeapObject(a.metadata?.name, b.metadata?.name));
    assert.ok(!sameHeapObject(a.metadata?.uid, b.metadata?.uid));
    assert.ok(
      !sameHeapObject(
        a.metadata?.annotations?.['example.com/checksum'],
        b.metadata?.annotations?.['example.com/checksum'],
      ),
    );
  });

  it('accepts objects without metadata or without the optional fields', () => {
    const interner = new StringInterner();
    assert.deepEqual(interner.internObject({}), {});
    assert.deepEqual(interner.internObject({ metadata: { name: 'n' } }), { metadata: { name: 'n' } });
  });
});
