import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import {
  appended,
  BinaryReader,
  decodeStatus,
  FrameDecoder,
  isProtobufMediaType,
  readFields,
  readMessage,
  readTime,
  unwrapObject,
  WireType,
} from './protobuf.ts';
import { protobufObject, watchFrame } from './protobuf-encoding.test-support.ts';
import { MAGIC } from './proto-fields.ts';

// Inputs are built field by field with the wire writer, as k8s.io's generated.proto numbers them.

/** A message holding one `metav1.Time` as field 1, and a reader positioned on that field's value. */
function timeReader(write: (writer: BinaryWriter) => void): BinaryReader {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).fork();
  write(writer);
  writer.join();
  const reader = new BinaryReader(writer.finish());
  assert.deepEqual(reader.tag(), [1, WireType.LengthDelimited]);
  return reader;
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

describe('isProtobufMediaType', () => {
  it('recognises the protobuf media type, with parameters and spaces, and nothing else', () => {
    assert.equal(isProtobufMediaType('application/vnd.kubernetes.protobuf'), true);
    assert.equal(isProtobufMediaType('application/vnd.kubernetes.protobuf;stream=watch'), true);
    assert.equal(isProtobufMediaType(' application/vnd.kubernetes.protobuf ; stream=watch'), true);
    assert.equal(isProtobufMediaType('application/json'), false);
    assert.equal(isProtobufMediaType('application/vnd.kubernetes.protobuf+json'), false);
    assert.equal(isProtobufMediaType(''), false);
    assert.equal(isProtobufMediaType(undefined), false);
  });
});

describe('unwrapObject', () => {
  it('reads the prefix alone as an object of no type and an empty message', () => {
    assert.deepEqual(unwrapObject(MAGIC), { apiVersion: '', kind: '', raw: new Uint8Array() });
  });

  it('skips its known fields when they come with another wire type', () => {
    const bytes = protobufObject('v1', 'Pod', Uint8Array.of(1, 2), (writer) => {
      skippedVarints(writer, 1);
      skippedVarints(writer, 2);
      skippedVarints(writer, 3);
      writer.tag(4, WireType.Bit32).fixed32(300);
      skippedBytes(writer, 5);
    });
    assert.deepEqual(unwrapObject(bytes), { apiVersion: 'v1', kind: 'Pod', raw: Uint8Array.of(1, 2) });
  });

  it('reads the type and the raw message of an object', () => {
    const raw = Uint8Array.of(0x0a, 0x01, 0x61);
    const object = unwrapObject(protobufObject('apps/v1', 'Deployment', raw));
    assert.deepEqual(object, { apiVersion: 'apps/v1', kind: 'Deployment', raw });
    assert.ok(object.raw instanceof Uint8Array);
  });

  it('skips fields it does not know, and accepts an empty contentEncoding and a contentType', () => {
    const bytes = protobufObject('v1', 'Pod', Uint8Array.of(1, 2, 3), (writer) => {
      writer.tag(3, WireType.LengthDelimited).string('');
      writer.tag(4, WireType.LengthDelimited).string('application/vnd.kubernetes.protobuf');
      writer.tag(9, WireType.Varint).int32(7);
      writer.tag(10, WireType.LengthDelimited).string('from a newer API');
      writer.tag(11, WireType.Bit64).fixed64(1n);
      writer.tag(12, WireType.Bit32).fixed32(1);
    });
    assert.deepEqual(unwrapObject(bytes), { apiVersion: 'v1', kind: 'Pod', raw: Uint8Array.of(1, 2, 3) });
  });

  it('skips unknown fields of the TypeMeta, and a type field of another wire type', () => {
    const writer = new BinaryWriter();
    writer.tag(1, WireType.LengthDelimited).fork();
    writer.tag(3, WireType.LengthDelimited).string('unknown');
    writer.tag(1, WireType.Varint).int32(5);
    writer.tag(2, WireType.LengthDelimited).string('ConfigMap');
    writer.tag(4, WireType.LengthDelimited).string('unknown, after the kind');
    writer.join();
    const unknown = writer.finish();
    const bytes = new Uint8Array([...MAGIC, ...unknown]);
    assert.deepEqual(unwrapObject(bytes), { apiVersion: '', kind: 'ConfigMap', raw: new Uint8Array() });
  });

  it('throws for bytes without the k8s\\0 prefix, or shorter than it', () => {
    const object = protobufObject('v1', 'Pod', Uint8Array.of(1));
    assert.throws(() => unwrapObject(object.subarray(4)), /no k8s\\0 prefix/);
    assert.throws(() => unwrapObject(new TextEncoder().encode('{"kind":"Pod"}')), /no k8s\\0 prefix/);
    assert.throws(() => unwrapObject(MAGIC.subarray(0, 3)), /no k8s\\0 prefix/);
    assert.throws(() => unwrapObject(new Uint8Array()), /no k8s\\0 prefix/);
    const wrongLastByte = Uint8Array.from(object);
    wrongLastByte[3] = 0x01;
    assert.throws(() => unwrapObject(wrongLastByte), /no k8s\\0 prefix/);
  });

  it('throws for a compressed object (a non-empty contentEncoding)', () => {
    const bytes = protobufObject('v1', 'Pod', Uint8Array.of(1), (writer) => {
      writer.tag(3, WireType.LengthDelimited).string('gzip');
    });
    assert.throws(() => unwrapObject(bytes), /unsupported protobuf contentEncoding "gzip"/);
  });
});

describe('readTime', () => {
  it('reads the zero time, an empty message, as null', () => {
    const reader = timeReader(() => undefined);
    assert.equal(readTime(reader), null);
    assert.equal(reader.pos, reader.len, 'the value is consumed');
  });

  it('reads seconds and nanos as RFC 3339 in UTC to the second, dropping the nanos', () => {
    const seconds = Date.UTC(2026, 10, 25, 14, 3, 0) / 1000;
    const reader = timeReader((writer) => {
      writer.tag(1, WireType.Varint).int64(seconds);
      writer.tag(2, WireType.Varint).int32(999_999_999);
    });
    assert.equal(readTime(reader), '2026-11-25T14:03:00Z');
    assert.equal(reader.pos, reader.len);
  });

  it('reads the epoch, and a time of nanos only, as 1970-01-01T00:00:00Z', () => {
    assert.equal(
      readTime(timeReader((writer) => writer.tag(1, WireType.Varint).int64(0))),
      '1970-01-01T00:00:00Z',
    );
    assert.equal(
      readTime(timeReader((writer) => writer.tag(2, WireType.Varint).int32(500))),
      '1970-01-01T00:00:00Z',
    );
  });

  it('gives each time its own text when times alternate (the last one is kept, not mixed up)', () => {
    const at = (seconds: number) =>
      readTime(timeReader((writer) => writer.tag(1, WireType.Varint).int64(seconds)));
    const first = Date.UTC(2026, 10, 25, 14, 3, 0) / 1000;
    assert.deepStrictEqual(
      [at(first), at(first), at(first + 1), at(first), at(first + 3600)],
      [
        '2026-11-25T14:03:00Z',
        '2026-11-25T14:03:00Z',
        '2026-11-25T14:03:01Z',
        '2026-11-25T14:03:00Z',
        '2026-11-25T15:03:00Z',
      ],
    );
  });

  it('skips a seconds field of another wire type, and unknown fields', () => {
    const reader = timeReader((writer) => {
      writer.tag(1, WireType.LengthDelimited).string('not seconds');
      writer.tag(3, WireType.Varint).int64(99);
      writer.tag(1, WireType.Varint).int64(120);
    });
    assert.equal(readTime(reader), '1970-01-01T00:02:00Z');
  });

  it('formats a time once while the same second repeats', () => {
    const second = Date.UTC(2031, 0, 2, 3, 4, 5) / 1000;
    const readers = [second, second, second + 1].map((s) =>
      timeReader((writer) => writer.tag(1, WireType.Varint).int64(s)),
    );
    const toISOString = mock.method(Date.prototype, 'toISOString');
    try {
      assert.deepEqual(
        readers.map((reader) => readTime(reader)),
        ['2031-01-02T03:04:05Z', '2031-01-02T03:04:05Z', '2031-01-02T03:04:06Z'],
      );
      assert.equal(toISOString.mock.callCount(), 2);
    } finally {
      toISOString.mock.restore();
    }
  });

  it('leaves the reader after the time, on the next field of the parent', () => {
    const writer = new BinaryWriter();
    writer.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.Varint).int64(60).join();
    writer.tag(2, WireType.LengthDelimited).string('next');
    const reader = new BinaryReader(writer.finish());
    reader.tag();
    assert.equal(readTime(reader), '1970-01-01T00:01:00Z');
    assert.deepEqual(reader.tag(), [2, WireType.LengthDelimited]);
    assert.equal(reader.string(), 'next');
  });
});

describe('decodeStatus', () => {
  it('reads every field of a Status as its JSON gives it, causes with their `reason`', () => {
    const writer = new BinaryWriter();
    writer.tag(1, WireType.LengthDelimited).fork().tag(2, WireType.LengthDelimited).string('rv').join();
    writer.tag(2, WireType.LengthDelimited).string('Failure');
    writer.tag(3, WireType.LengthDelimited).string('Pod "a" is invalid');
    writer.tag(4, WireType.LengthDelimited).string('Invalid');
    writer.tag(5, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string('a');
    writer.tag(2, WireType.LengthDelimited).string('apps');
    writer.tag(3, WireType.LengthDelimited).string('deployments');
    writer.tag(4, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string('FieldValueRequired');
    writer.tag(2, WireType.LengthDelimited).string('Required value');
    writer.tag(3, WireType.LengthDelimited).string('spec.replicas');
    writer.join();
    writer.tag(4, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string('FieldValueInvalid');
    writer.tag(9, WireType.LengthDelimited).string('a field of a newer API');
    writer.join();
    writer.tag(5, WireType.Varint).int32(7);
    writer.tag(6, WireType.LengthDelimited).string('6d1f8a2e-0c4b-4f7e-9a51-3b2c7d9e0f11');
    writer.join();
    writer.tag(6, WireType.Varint).int32(422);
    const status = decodeStatus({ apiVersion: 'v1', kind: 'Status', raw: writer.finish() });
    assert.deepStrictEqual(status, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'Pod "a" is invalid',
      reason: 'Invalid',
      details: {
        name: 'a',
        group: 'apps',
        kind: 'deployments',
        causes: [
          { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.replicas' },
          { reason: 'FieldValueInvalid' },
        ],
        retryAfterSeconds: 7,
        uid: '6d1f8a2e-0c4b-4f7e-9a51-3b2c7d9e0f11',
      },
      code: 422,
    });
  });

  it('reads a minimal Status: only what was sent, with the envelope type', () => {
    const writer = new BinaryWriter();
    writer.tag(4, WireType.LengthDelimited).string('Expired');
    writer.tag(6, WireType.Varint).int32(410);
    assert.deepStrictEqual(decodeStatus({ apiVersion: 'v1', kind: 'Status', raw: writer.finish() }), {
      kind: 'Status',
      apiVersion: 'v1',
      reason: 'Expired',
      code: 410,
    });
    assert.deepStrictEqual(decodeStatus({ apiVersion: 'v1', kind: 'Status', raw: new Uint8Array() }), {
      kind: 'Status',
      apiVersion: 'v1',
    });
  });

  it('omits empty strings and a zero retryAfterSeconds, as Go omitempty JSON does', () => {
    const writer = new BinaryWriter();
    writer.tag(2, WireType.LengthDelimited).string('');
    writer.tag(3, WireType.LengthDelimited).string('');
    writer.tag(4, WireType.LengthDelimited).string('');
    writer.tag(5, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string('');
    writer.tag(2, WireType.LengthDelimited).string('');
    writer.tag(3, WireType.LengthDelimited).string('');
    writer.tag(4, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string('');
    writer.tag(2, WireType.LengthDelimited).string('');
    writer.tag(3, WireType.LengthDelimited).string('');
    writer.join();
    writer.tag(5, WireType.Varint).int32(0);
    writer.tag(6, WireType.LengthDelimited).string('');
    writer.join();
    writer.tag(6, WireType.Varint).int32(500);
    assert.deepStrictEqual(decodeStatus({ apiVersion: 'v1', kind: 'Status', raw: writer.finish() }), {
      kind: 'Status',
      apiVersion: 'v1',
      details: { causes: [{}] },
      code: 500,
    });
  });

  it('omits a zero code, which Go always sends (a success Status has none in its JSON)', () => {
    const writer = new BinaryWriter();
    writer.tag(2, WireType.LengthDelimited).string('Success');
    writer.tag(6, WireType.Varint).int32(0);
    assert.deepStrictEqual(decodeStatus({ apiVersion: 'v1', kind: 'Status', raw: writer.finish() }), {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Success',
    });
  });

  it('skips fields of details and causes that come with another wire type', () => {
    const writer = new BinaryWriter();
    skippedVarints(writer, 5);
    writer.tag(5, WireType.LengthDelimited).fork();
    skippedVarints(writer, 1);
    skippedVarints(writer, 4);
    // retryAfterSeconds as bytes: a 0, an illegal tag if the bytes were not skipped whole.
    writer.tag(5, WireType.LengthDelimited).bytes(Uint8Array.of(0));
    skippedVarints(writer, 9);
    skippedBytes(writer, 9);
    writer.tag(4, WireType.LengthDelimited).fork();
    skippedVarints(writer, 1);
    writer.tag(3, WireType.LengthDelimited).string('spec');
    writer.join();
    writer.join();
    skippedBytes(writer, 7);
    assert.deepStrictEqual(decodeStatus({ apiVersion: 'v1', kind: 'Status', raw: writer.finish() }), {
      kind: 'Status',
      apiVersion: 'v1',
      details: { causes: [{ field: 'spec' }] },
    });
  });

  it('skips a field of an unexpected wire type, and unknown fields', () => {
    const writer = new BinaryWriter();
    writer.tag(2, WireType.Varint).int32(1);
    skippedVarints(writer, 9);
    writer.tag(6, WireType.LengthDelimited).string('not a code');
    writer.tag(7, WireType.LengthDelimited).string('unknown');
    writer.tag(3, WireType.LengthDelimited).string('kept');
    assert.deepStrictEqual(decodeStatus({ apiVersion: 'v1', kind: 'Status', raw: writer.finish() }), {
      kind: 'Status',
      apiVersion: 'v1',
      message: 'kept',
    });
  });
});

describe('readFields', () => {
  it('calls back for each field and skips those it declines', () => {
    const writer = new BinaryWriter();
    writer.tag(1, WireType.LengthDelimited).string('a');
    writer.tag(2, WireType.Varint).int32(5);
    writer.tag(3, WireType.LengthDelimited).string('b');
    const reader = new BinaryReader(writer.finish());
    const seen: [number, WireType][] = [];
    const strings: string[] = [];
    readFields(reader, reader.len, (field, wireType) => {
      seen.push([field, wireType]);
      if (wireType !== WireType.LengthDelimited) return false;
      strings.push(reader.string());
      return true;
    });
    assert.deepEqual(seen, [
      [1, WireType.LengthDelimited],
      [2, WireType.Varint],
      [3, WireType.LengthDelimited],
    ]);
    assert.deepEqual(strings, ['a', 'b']);
    assert.equal(reader.pos, reader.len);
  });

  it("throws when a nested message's declared length runs past its parent's end", () => {
    // A parent (field 1, 2 bytes) holding a child (field 1) that says it is 4 bytes long: the child's
    // bytes would be the 4 bytes after the parent, which are the next top-level fields.
    const bytes = Uint8Array.of(0x0a, 0x02, 0x0a, 0x04, 0x08, 0x01, 0x10, 0x02);
    const reader = new BinaryReader(bytes);
    assert.throws(() => {
      readFields(reader, reader.len, (field, wireType) => {
        if (field !== 1 || wireType !== WireType.LengthDelimited) return false;
        readMessage(reader, (parentEnd) => {
          readFields(reader, parentEnd, (childField, childWire) => {
            if (childField !== 1 || childWire !== WireType.LengthDelimited) return false;
            readMessage(reader, (childEnd) => {
              readFields(reader, childEnd, () => false);
            });
            return true;
          });
        });
        return true;
      });
    }, /a field runs past the end of its message/);
  });

  it('throws when a skipped field runs past its message', () => {
    // A message of 2 bytes whose field 2 says it is 3 bytes long: skipping it ends past the message.
    const bytes = Uint8Array.of(0x12, 0x03, 0x61, 0x62, 0x63);
    const reader = new BinaryReader(bytes);
    assert.throws(() => {
      readFields(reader, 2, () => false);
    }, /a field runs past the end of its message/);
  });
});

describe('FrameDecoder', () => {
  it('returns both frames of one chunk, and no pending bytes after them', () => {
    const decoder = new FrameDecoder();
    const frames = decoder.push(Buffer.concat([watchFrame('first'), watchFrame('second event')]));
    assert.deepEqual(
      frames.map((f) => f.toString()),
      ['first', 'second event'],
    );
    assert.equal(decoder.pendingBytes(), 0);
    assert.deepEqual(decoder.push(Buffer.alloc(0)), []);
    assert.equal(decoder.pendingBytes(), 0);
  });

  it('assembles frames fed one byte at a time', () => {
    const decoder = new FrameDecoder();
    const stream = Buffer.concat([watchFrame('abc'), watchFrame('a longer frame'), watchFrame('z')]);
    const frames: string[] = [];
    const completedAt: number[] = [];
    for (let i = 0; i < stream.length; i++) {
      for (const f of decoder.push(stream.subarray(i, i + 1))) {
        frames.push(f.toString());
        completedAt.push(i);
      }
      const frameStart = completedAt.length === 0 ? 0 : (completedAt.at(-1) ?? 0) + 1;
      assert.equal(decoder.pendingBytes(), i + 1 - frameStart, `pending after byte ${i}`);
    }
    assert.deepEqual(frames, ['abc', 'a longer frame', 'z']);
    assert.deepEqual(completedAt, [6, 6 + 18, 6 + 18 + 5], 'each frame as soon as its last byte arrives');
    assert.equal(decoder.pendingBytes(), 0);
  });

  it('waits for the rest of a length prefix that a chunk cuts', () => {
    const decoder = new FrameDecoder();
    const stream = Buffer.concat([watchFrame('one'), watchFrame('two')]);
    // The first frame, and 2 of the 4 bytes of the second one's length.
    assert.deepEqual(
      decoder.push(stream.subarray(0, 9)).map((f) => f.toString()),
      ['one'],
    );
    assert.equal(decoder.pendingBytes(), 2);
    assert.deepEqual(decoder.push(stream.subarray(9, 11)), []);
    assert.equal(decoder.pendingBytes(), 4);
    assert.deepEqual(
      decoder.push(stream.subarray(11)).map((f) => f.toString()),
      ['two'],
    );
    assert.equal(decoder.pendingBytes(), 0);
  });

  it('counts the bytes of an unfinished frame as pending', () => {
    const decoder = new FrameDecoder();
    const whole = watchFrame('0123456789');
    assert.deepEqual(decoder.push(whole.subarray(0, 7)), []);
    assert.equal(decoder.pendingBytes(), 7);
    assert.deepEqual(decoder.push(whole.subarray(7, 10)), []);
    assert.equal(decoder.pendingBytes(), 10);
    const rest = Buffer.concat([whole.subarray(10), watchFrame('next').subarray(0, 5)]);
    assert.deepEqual(
      decoder.push(rest).map((f) => f.toString()),
      ['0123456789'],
    );
    assert.equal(decoder.pendingBytes(), 5);
  });

  it('returns a zero-length frame as an empty buffer', () => {
    const decoder = new FrameDecoder();
    const frames = decoder.push(Buffer.concat([watchFrame(''), watchFrame('x'), watchFrame('')]));
    assert.deepEqual(
      frames.map((f) => f.length),
      [0, 1, 0],
    );
    assert.equal(decoder.pendingBytes(), 0);
    assert.deepEqual(decoder.push(Buffer.of(0, 0, 0)), []);
    assert.deepEqual(
      decoder.push(Buffer.of(0)).map((f) => f.length),
      [0],
    );
    assert.equal(decoder.pendingBytes(), 0);
  });
});

describe('FrameDecoder, copying', () => {
  it('joins the chunks of a frame once, when it is complete, and hands out a frame of one chunk uncopied', () => {
    const decoder = new FrameDecoder();
    const first = watchFrame('a frame cut into many chunks');
    const second = watchFrame('a frame in one chunk');
    const third = watchFrame('another one');
    const concat = mock.method(Buffer, 'concat');
    try {
      const frames: Buffer[] = [];
      // Its length prefix whole, then the rest 3 bytes at a time.
      frames.push(...decoder.push(first.subarray(0, 4)));
      for (let i = 4; i < first.length; i += 3) frames.push(...decoder.push(first.subarray(i, i + 3)));
      assert.equal(concat.mock.callCount(), 1);
      const [whole] = decoder.push(second);
      assert.ok(whole);
      assert.equal(whole.toString(), 'a frame in one chunk');
      assert.equal(whole.buffer, second.buffer, 'a view of the chunk');
      const [next] = decoder.push(third);
      assert.ok(next);
      assert.equal(next.buffer, third.buffer);
      assert.equal(concat.mock.callCount(), 1);
      assert.deepEqual(
        frames.map((f) => f.toString()),
        ['a frame cut into many chunks'],
      );
    } finally {
      concat.mock.restore();
    }
  });
});

describe('appended', () => {
  it('gives a new array with the item last, and leaves the list as it was', () => {
    const list = ['a', 'b'];
    const longer = appended(list, 'c');
    assert.deepStrictEqual(longer, ['a', 'b', 'c']);
    assert.deepStrictEqual(list, ['a', 'b']);
    assert.deepStrictEqual(appended(undefined, 'a'), ['a']);
  });
});
