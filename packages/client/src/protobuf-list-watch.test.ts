import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { BinaryReader, readFields, WireType } from './protobuf.ts';
import { decodeListPage, decodeWatchEvent, readObjectMeta } from './protobuf-list-watch.ts';
import type { KubeObject, ObjectMeta } from './object.ts';
import { protobufObject } from './protobuf-encoding.test-support.ts';

// Inputs are built field by field with the wire writer, as k8s.io's generated.proto numbers them.

const LD = WireType.LengthDelimited;

/** `k8s\0` + a `runtime.Unknown` with the given type and raw message. */
const wrap = (apiVersion: string, kind: string, raw: Uint8Array): Uint8Array =>
  protobufObject(apiVersion, kind, raw);

/** A top-level kind's message with its ObjectMeta as field 1 and an unrelated field 2 (a spec). */
function objectMessage(writeMeta: (writer: BinaryWriter) => void): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, LD).fork();
  writeMeta(writer);
  writer.join();
  writer.tag(2, LD).fork().tag(1, LD).string('a spec the test decoder skips').join();
  return writer.finish();
}

/** A decoder as a kind's would be: ObjectMeta from field 1, the rest skipped. */
function decodeMetaOnly(message: Uint8Array): KubeObject {
  const reader = new BinaryReader(message);
  const object: KubeObject = {};
  readFields(reader, reader.len, (field, wireType) => {
    if (field !== 1 || wireType !== LD) return false;
    object.metadata = readObjectMeta(reader);
    return true;
  });
  return object;
}

/** readObjectMeta on an ObjectMeta written by `write`. */
function meta(write: (writer: BinaryWriter) => void): ObjectMeta {
  const object = decodeMetaOnly(objectMessage(write));
  assert.ok(object.metadata !== undefined);
  return object.metadata;
}

const named = (name: string) => (writer: BinaryWriter) => writer.tag(1, LD).string(name);

function mapEntry(writer: BinaryWriter, field: number, key: string, value: string): void {
  writer.tag(field, LD).fork().tag(1, LD).string(key).tag(2, LD).string(value).join();
}

function time(writer: BinaryWriter, field: number, seconds: number | undefined, nanos = 0): void {
  writer.tag(field, LD).fork();
  if (seconds !== undefined) writer.tag(1, WireType.Varint).int64(seconds);
  if (nanos !== 0) writer.tag(2, WireType.Varint).int32(nanos);
  writer.join();
}

const seconds = (iso: string): number => Date.parse(iso) / 1000;

/** A `metav1.WatchEvent` frame; `object` goes into its RawExtension's Raw when given. */
function watchFrame(type: string | undefined, object: Uint8Array | undefined): Uint8Array {
  const writer = new BinaryWriter();
  if (type !== undefined) writer.tag(1, LD).string(type);
  writer.tag(2, LD).fork();
  if (object !== undefined) writer.tag(1, LD).bytes(object);
  writer.join();
  return writer.finish();
}

/**
 * Field `field` written twice as a varint, a wire type its decoder skips: 300 read as a length would
 * run past the message, and a 0 left unread would be read as an illegal tag.
 */
function skippedVarints(writer: BinaryWriter, field: number): void {
  writer.tag(field, WireType.Varint).int32(300).tag(field, WireType.Varint).int32(0);
}

/** A bytes field its decoder skips: a single 0, an illegal tag if it were read as fields. */
function skippedBytes(writer: BinaryWriter, field: number): void {
  writer.tag(field, WireType.LengthDelimited).bytes(Uint8Array.of(0));
}

describe('decodeListPage', () => {
  it("gives the items, typed as the list's kind without List, and where the list stands", () => {
    const list = new BinaryWriter();
    list.tag(1, LD).fork();
    list.tag(1, LD).string('/api/v1/pods'); // selfLink: skipped
    list.tag(2, LD).string('4711');
    list.tag(3, LD).string('continue-token');
    list.tag(4, WireType.Varint).int64(12); // remainingItemCount: skipped
    list.tag(5, LD).fork(); // shardInfo
    list.tag(2, LD).string('a field of a newer ShardInfo');
    list.tag(1, LD).string('the applied selector');
    list.join();
    list.join();
    list.tag(2, LD).bytes(objectMessage(named('a')));
    list.tag(9, LD).string('a field of a newer API');
    list.tag(10, WireType.Varint).int32(1);
    list.tag(2, LD).bytes(objectMessage(named('b')));
    const page = decodeListPage(wrap('v1', 'PodList', list.finish()), decodeMetaOnly);
    assert.deepStrictEqual(page, {
      items: [
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } },
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b' } },
      ],
      resourceVersion: '4711',
      continue: 'continue-token',
      shardSelector: 'the applied selector',
    });
  });

  it('gives an empty page of an empty list, with the group version of the list', () => {
    const list = new BinaryWriter();
    list.tag(1, LD).fork().tag(2, LD).string('9').join();
    assert.deepStrictEqual(decodeListPage(wrap('apps/v1', 'DeploymentList', list.finish()), decodeMetaOnly), {
      items: [],
      resourceVersion: '9',
      continue: '',
    });
    const withItem = new BinaryWriter()
      .tag(2, LD)
      .bytes(objectMessage(named('d')))
      .finish();
    assert.deepStrictEqual(decodeListPage(wrap('apps/v1', 'DeploymentList', withItem), decodeMetaOnly), {
      items: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }],
      resourceVersion: '',
      continue: '',
    });
  });

  it('skips list and list-meta fields that come with another wire type', () => {
    const list = new BinaryWriter();
    skippedVarints(list, 1);
    skippedVarints(list, 2);
    list.tag(1, LD).fork();
    skippedVarints(list, 2);
    skippedVarints(list, 3);
    list.tag(2, LD).string('12');
    list.tag(3, LD).string('token');
    list.tag(1, LD).string('/api/v1/pods'); // selfLink, after the fields read
    list.join();
    assert.deepStrictEqual(decodeListPage(wrap('v1', 'PodList', list.finish()), decodeMetaOnly), {
      items: [],
      resourceVersion: '12',
      continue: 'token',
    });
  });

  it('leaves the type of an item to the caller when the list kind does not end in List', () => {
    const list = new BinaryWriter()
      .tag(2, LD)
      .bytes(objectMessage(named('x')))
      .finish();
    assert.deepStrictEqual(decodeListPage(wrap('v1', 'Table', list), decodeMetaOnly), {
      items: [{ metadata: { name: 'x' } }],
      resourceVersion: '',
      continue: '',
    });
  });

  it('throws for bytes that are not a Kubernetes protobuf object', () => {
    assert.throws(
      () => decodeListPage(new TextEncoder().encode('{"items":[]}'), decodeMetaOnly),
      /no k8s\\0 prefix/,
    );
  });
});

describe('decodeWatchEvent', () => {
  it('gives an ADDED object decoded by the decoder, typed from its envelope', () => {
    const pod = objectMessage((writer) => {
      writer.tag(1, LD).string('a');
      writer.tag(3, LD).string('ns');
      writer.tag(6, LD).string('17');
    });
    const event = decodeWatchEvent(watchFrame('ADDED', wrap('v1', 'Pod', pod)), decodeMetaOnly);
    assert.deepStrictEqual(event, {
      type: 'ADDED',
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'a', namespace: 'ns', resourceVersion: '17' },
      },
    });
  });

  it('gives a BOOKMARK with its resourceVersion and annotations', () => {
    const pod = objectMessage((writer) => {
      writer.tag(6, LD).string('150');
      mapEntry(writer, 12, 'k8s.io/initial-events-end', 'true');
    });
    assert.deepStrictEqual(decodeWatchEvent(watchFrame('BOOKMARK', wrap('v1', 'Pod', pod)), decodeMetaOnly), {
      type: 'BOOKMARK',
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { resourceVersion: '150', annotations: { 'k8s.io/initial-events-end': 'true' } },
      },
    });
  });

  it("gives an ERROR event's Status as its JSON reads, without calling the decoder", () => {
    const status = new BinaryWriter();
    status.tag(1, LD).fork().join();
    status.tag(2, LD).string('Failure');
    status.tag(3, LD).string('too old resource version: 1 (4711)');
    status.tag(4, LD).string('Expired');
    status.tag(6, WireType.Varint).int32(410);
    const event = decodeWatchEvent(watchFrame('ERROR', wrap('v1', 'Status', status.finish())), () =>
      assert.fail('the decoder is for the scope kind, not Status'),
    );
    assert.deepStrictEqual(event, {
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'too old resource version: 1 (4711)',
        reason: 'Expired',
        code: 410,
      },
    });
  });

  it('skips event and raw-extension fields it does not read, or of another wire type', () => {
    const pod = wrap('v1', 'Pod', objectMessage(named('p')));
    const writer = new BinaryWriter();
    skippedVarints(writer, 1);
    skippedVarints(writer, 2);
    writer.tag(3, LD).string('a field of a newer API');
    writer.tag(1, LD).string('DELETED');
    writer.tag(2, LD).fork();
    skippedVarints(writer, 1);
    writer.tag(1, LD).bytes(pod);
    writer.tag(2, LD).string('not the raw bytes');
    writer.join();
    assert.deepStrictEqual(decodeWatchEvent(writer.finish(), decodeMetaOnly), {
      type: 'DELETED',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
    });
  });

  it('throws for an event without an object', () => {
    assert.throws(
      () => decodeWatchEvent(watchFrame('ADDED', undefined), decodeMetaOnly),
      /^Error: protobuf watch event ADDED has no object$/,
    );
    assert.throws(
      () => decodeWatchEvent(new BinaryWriter().tag(1, LD).string('MODIFIED').finish(), decodeMetaOnly),
      /^Error: protobuf watch event MODIFIED has no object$/,
    );
    assert.throws(
      () => decodeWatchEvent(new Uint8Array(), decodeMetaOnly),
      /^Error: protobuf watch event \(no type\) has no object$/,
    );
  });

  it('throws for an object that is not a Kubernetes protobuf object', () => {
    assert.throws(
      () => decodeWatchEvent(watchFrame('ADDED', new TextEncoder().encode('{}')), decodeMetaOnly),
      /no k8s\\0 prefix/,
    );
  });
});

describe('readObjectMeta', () => {
  it('reads every field as the JSON of the API server gives it', () => {
    const fieldsV1 = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': {} };
    const decoded = meta((writer) => {
      writer.tag(1, LD).string('web-0');
      writer.tag(2, LD).string('web-');
      writer.tag(3, LD).string('prod');
      writer.tag(4, LD).string('/api/v1/namespaces/prod/pods/web-0');
      writer.tag(5, LD).string('c2a4e6f8-1b3d-4c5e-8f70-92a4b6c8d0e2');
      writer.tag(6, LD).string('4711');
      writer.tag(7, WireType.Varint).int64(3);
      time(writer, 8, seconds('2026-11-25T10:00:00Z'), 123_456_789);
      time(writer, 9, seconds('2026-11-25T10:05:30Z'));
      writer.tag(10, WireType.Varint).int64(30);
      mapEntry(writer, 11, 'app', 'web');
      mapEntry(writer, 11, 'empty', '');
      mapEntry(writer, 12, 'note', 'hello');
      writer.tag(13, LD).fork();
      writer.tag(1, LD).string('StatefulSet');
      writer.tag(3, LD).string('web');
      writer.tag(4, LD).string('6d1f8a2e-0c4b-4f7e-9a51-3b2c7d9e0f11');
      writer.tag(5, LD).string('apps/v1');
      writer.tag(6, WireType.Varint).bool(true);
      writer.tag(7, WireType.Varint).bool(true);
      writer.join();
      writer.tag(14, LD).string('example.com/cleanup');
      writer.tag(14, LD).string('example.com/second');
      writer.tag(15, LD).string('a removed field (clusterName)');
      writer.tag(17, LD).fork();
      writer.tag(1, LD).string('kube-controller-manager');
      writer.tag(2, LD).string('Update');
      writer.tag(3, LD).string('v1');
      time(writer, 4, seconds('2026-11-25T10:00:01Z'));
      writer.tag(6, LD).string('FieldsV1');
      writer
        .tag(7, LD)
        .fork()
        .tag(1, LD)
        .bytes(new TextEncoder().encode(JSON.stringify(fieldsV1)))
        .join();
      writer.tag(8, LD).string('status');
      writer.join();
      writer.tag(99, WireType.Varint).int32(1);
    });
    assert.deepStrictEqual(decoded, {
      name: 'web-0',
      generateName: 'web-',
      namespace: 'prod',
      selfLink: '/api/v1/namespaces/prod/pods/web-0',
      uid: 'c2a4e6f8-1b3d-4c5e-8f70-92a4b6c8d0e2',
      resourceVersion: '4711',
      generation: 3,
      creationTimestamp: '2026-11-25T10:00:00Z',
      deletionTimestamp: '2026-11-25T10:05:30Z',
      deletionGracePeriodSeconds: 30,
      labels: { app: 'web', empty: '' },
      annotations: { note: 'hello' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'web',
          uid: '6d1f8a2e-0c4b-4f7e-9a51-3b2c7d9e0f11',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: ['example.com/cleanup', 'example.com/second'],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-11-25T10:00:01Z',
          fieldsType: 'FieldsV1',
          fieldsV1,
          subresource: 'status',
        },
      ],
    });
  });

  it('omits empty strings and a zero generation; the zero creationTimestamp is null', () => {
    const decoded = meta((writer) => {
      for (const field of [1, 2, 3, 4, 5, 6]) writer.tag(field, LD).string('');
      writer.tag(7, WireType.Varint).int64(0);
      time(writer, 8, undefined);
      time(writer, 9, undefined);
      writer.tag(17, LD).fork();
      for (const field of [1, 2, 3, 6, 8]) writer.tag(field, LD).string('');
      time(writer, 4, undefined);
      writer.join();
    });
    assert.deepStrictEqual(decoded, { creationTimestamp: null, managedFields: [{}] });
    assert.deepStrictEqual(
      meta(() => undefined),
      {},
    );
  });

  it('keeps a deletionGracePeriodSeconds of 0: a pointer in Go, sent only when set', () => {
    assert.deepStrictEqual(
      meta((writer) => {
        writer.tag(1, LD).string('a');
        writer.tag(10, WireType.Varint).int64(0);
      }),
      { name: 'a', deletionGracePeriodSeconds: 0 },
    );
  });

  it('gives an owner reference its four strings always, and its flags only when sent', () => {
    const decoded = meta((writer) => {
      writer.tag(13, LD).fork();
      writer.tag(5, LD).string('v1');
      writer.tag(1, LD).string('ConfigMap');
      writer.tag(3, LD).string('cm');
      writer.tag(4, LD).string('uid-1');
      writer.join();
      writer.tag(13, LD).fork();
      writer.tag(1, LD).string('Node');
      writer.tag(6, WireType.Varint).bool(false);
      writer.tag(7, WireType.Varint).bool(false);
      writer.join();
    });
    assert.deepStrictEqual(decoded, {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'uid-1' },
        { apiVersion: '', kind: 'Node', name: '', uid: '', controller: false, blockOwnerDeletion: false },
      ],
    });
    const first = decoded.ownerReferences[0];
    assert.ok(first !== undefined && !('controller' in first) && !('blockOwnerDeletion' in first));
  });

  it('skips fields it does not read, or of another wire type, at every level', () => {
    const decoded = meta((writer) => {
      writer.tag(1, WireType.Bit32).fixed32(300);
      skippedVarints(writer, 1);
      writer.tag(1, LD).string('kept');
      writer.tag(16, WireType.Bit64).fixed64(300n);
      skippedBytes(writer, 15);
      writer.tag(11, LD).fork();
      skippedVarints(writer, 1);
      writer.tag(1, LD).string('app').tag(2, LD).string('web');
      writer.tag(3, LD).string('not a key or a value');
      writer.join();
      writer.tag(11, LD).fork().tag(1, LD).string('no-value').join();
      writer.tag(11, LD).fork().tag(2, LD).string('no key').join();
      writer.tag(13, LD).fork();
      writer.tag(1, WireType.Bit32).fixed32(300);
      skippedVarints(writer, 8);
      writer.tag(2, LD).string('not a field of an owner reference');
      writer.tag(1, LD).string('Job');
      writer.tag(6, WireType.Varint).bool(true);
      writer.join();
      writer.tag(13, LD).fork().tag(7, WireType.Varint).bool(true).join();
      writer.tag(17, LD).fork();
      skippedVarints(writer, 1);
      writer.tag(5, LD).string('not a field of a managed fields entry');
      writer.tag(7, LD).fork();
      skippedVarints(writer, 1);
      writer.tag(2, LD).string('not the raw bytes');
      writer.tag(1, LD).bytes(new TextEncoder().encode('{"f:spec":{}}'));
      writer.join();
      writer.tag(1, LD).string('kubectl');
      writer.join();
    });
    assert.deepStrictEqual(decoded, {
      name: 'kept',
      labels: { app: 'web', 'no-value': '', '': 'no key' },
      ownerReferences: [
        { apiVersion: '', kind: 'Job', name: '', uid: '', controller: true },
        { apiVersion: '', kind: '', name: '', uid: '', blockOwnerDeletion: true },
      ],
      managedFields: [{ fieldsV1: { 'f:spec': {} }, manager: 'kubectl' }],
    });
  });

  it('leaves the reader after the metadata, on the next field of the object', () => {
    const writer = new BinaryWriter();
    writer.tag(1, LD).fork().tag(1, LD).string('a').join();
    writer.tag(2, LD).string('after');
    const reader = new BinaryReader(writer.finish());
    reader.tag();
    assert.deepStrictEqual(readObjectMeta(reader), { name: 'a' });
    assert.deepEqual(reader.tag(), [2, LD]);
    assert.equal(reader.string(), 'after');
  });
});
