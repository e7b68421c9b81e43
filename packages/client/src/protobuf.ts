/**
 * The API server's protobuf encoding (`application/vnd.kubernetes.protobuf`), as far as a client that
 * otherwise speaks JSON needs it: the envelope every object comes in, the frames of a watch stream, and
 * `Status` (an error response's body, and a watch `ERROR` event's object, come in the encoding asked
 * for). Decoders of other messages are written on {@link readFields}; every decoder gives what the
 * API server's JSON would (an empty string, a zero number or an empty list is absent there, as Go's
 * `omitempty` leaves it, and a time is an RFC 3339 string to the second).
 *
 * Why protobuf at all: the API server encodes each watch event once per encoding and shares the bytes
 * among the watchers that asked for it. kube-controller-manager watches built-in kinds as protobuf,
 * so a protobuf watcher of pods costs the server almost nothing, and a JSON one pays for its own
 * encoding of every event. Custom resources are served as JSON only.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { KubeStatus, KubeStatusCause, KubeStatusDetails } from './api-error.ts';
import { MAGIC, MAP_ENTRY, metaV1Fields, runtimeFields } from './proto-fields.ts';

export { BinaryReader, WireType };

const { Unknown, TypeMeta } = runtimeFields;
const { Status, StatusDetails, StatusCause, Time } = metaV1Fields;

/** The media type; a watch's response adds `;stream=watch`. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** Whether a response's `Content-Type` is protobuf (a watch's included). */
export function isProtobufMediaType(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim() === PROTOBUF_MEDIA_TYPE;
}

/** An object as the API server sends it: its type, and its message's bytes. */
export interface ProtobufObject {
  apiVersion: string;
  kind: string;
  /** The message itself (a `Pod`, a `PodList`, a `Status`...), to decode with {@link readFields}. */
  raw: Uint8Array;
}

/**
 * Unwraps an object: checks the `k8s\0` prefix and reads its `runtime.Unknown`. Throws for bytes that
 * are not such an object, or that are compressed (`contentEncoding`, which the API server never sets).
 */
export function unwrapObject(bytes: Uint8Array): ProtobufObject {
  // A shorter array reads undefined past its end, which no byte equals.
  if (MAGIC.some((byte, i) => bytes[i] !== byte)) {
    throw new Error('not a Kubernetes protobuf object (no k8s\\0 prefix)');
  }
  const reader = new BinaryReader(bytes.subarray(MAGIC.length));
  const object: ProtobufObject = { apiVersion: '', kind: '', raw: new Uint8Array() };
  readFields(reader, reader.len, (field, wireType) => {
    if (wireType !== WireType.LengthDelimited) return false;
    switch (field) {
      case Unknown.typeMeta:
        readMessage(reader, (end) => {
          readFields(reader, end, (typeField, typeWire) => {
            if (typeWire !== WireType.LengthDelimited) return false;
            if (typeField === TypeMeta.apiVersion) object.apiVersion = reader.string();
            else if (typeField === TypeMeta.kind) object.kind = reader.string();
            else return false;
            return true;
          });
        });
        return true;
      case Unknown.raw:
        object.raw = reader.bytes();
        return true;
      case Unknown.contentEncoding: {
        const encoding = reader.string();
        if (encoding !== '') throw new Error(`unsupported protobuf contentEncoding "${encoding}"`);
        return true;
      }
    }
    return false;
  });
  return object;
}

/**
 * Reads the fields of one message, from the reader's position to `end`: `read` is called with each
 * field's number and wire type, and either consumes the field's value from `reader` and returns true,
 * or returns false to have it skipped (a field this decoder does not keep, or one of a newer API).
 */
export function readFields(
  reader: BinaryReader,
  end: number,
  read: (field: number, wireType: WireType) => boolean,
): void {
  while (reader.pos < end) {
    const [field, wireType] = reader.tag();
    if (!read(field, wireType)) reader.skip(wireType, field);
  }
  if (reader.pos !== end) throw new Error('protobuf: a field runs past the end of its message');
}

/** Reads a length-delimited field's value as a message: `decode` gets the message's end. */
export function readMessage<T>(reader: BinaryReader, decode: (end: number) => T): T {
  const length = reader.uint32();
  return decode(reader.pos + length);
}

/**
 * Reads a `metav1.Time` message as the JSON has it: RFC 3339 in UTC to the second (the API server
 * drops the nanoseconds both ways), or null for the zero time, which is sent as an empty message.
 */
export function readTime(reader: BinaryReader): string | null {
  return readMessage(reader, (end) => {
    if (reader.pos === end) return null;
    let seconds = 0;
    readFields(reader, end, (field, wireType) => {
      if (field !== Time.seconds || wireType !== WireType.Varint) return false;
      seconds = Number(reader.int64());
      return true;
    });
    return rfc3339(seconds);
  });
}

let lastSeconds: number | undefined;
let lastRfc3339: string;

/**
 * The time as the JSON has it, e.g. `2026-11-25T14:03:00Z`. The last one is kept: the pods of one burst
 * were mostly created in the same second, and share the string. A flat copy: the concatenation
 * (`toISOString()` cut, plus `Z`) would be a rope of three strings in V8, about 90 bytes more than the
 * 20 characters, for as long as a cached object holds it.
 */
function rfc3339(seconds: number): string {
  if (seconds !== lastSeconds) {
    const text = `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
    lastRfc3339 = Buffer.from(text).toString('latin1');
    lastSeconds = seconds;
  }
  return lastRfc3339;
}

/**
 * `list` with `item` appended, as a new array of exactly that length. An array grown by `push` keeps
 * spare room (17 slots once it holds one item), which a cache of thousands of decoded objects would
 * hold for ever; the lists of an object's fields are short, so copying costs little.
 */
export function appended<T>(list: readonly T[] | undefined, item: T): T[] {
  return list === undefined ? [item] : [...list, item];
}

/** Reads an `int64` as a number (Kubernetes' int64 fields hold counts and seconds, far below 2^53). */
export function readInt64(reader: BinaryReader): number {
  return Number(reader.int64());
}

/** Reads a `map<string, string>` entry into `map`. */
export function readStringMapEntry(reader: BinaryReader, map: Record<string, string>): void {
  readMessage(reader, (end) => {
    let key = '';
    let value = '';
    readFields(reader, end, (field, wireType) => {
      if (wireType !== WireType.LengthDelimited) return false;
      if (field === MAP_ENTRY.key) key = reader.string();
      else if (field === MAP_ENTRY.value) value = reader.string();
      else return false;
      return true;
    });
    map[key] = value;
  });
}

/** `metav1.Status`'s string fields by number. */
const STATUS_STRINGS: StringFields<KubeStatus> = {
  [Status.status]: 'status',
  [Status.message]: 'message',
  [Status.reason]: 'reason',
};

/** `metav1.StatusDetails`'s string fields by number. */
const STATUS_DETAILS_STRINGS: StringFields<KubeStatusDetails> = {
  [StatusDetails.name]: 'name',
  [StatusDetails.group]: 'group',
  [StatusDetails.kind]: 'kind',
  [StatusDetails.uid]: 'uid',
};

/**
 * A `metav1.Status` (the `raw` of an object whose kind is `Status`) as its JSON reads, with the kind
 * and apiVersion its envelope gave.
 */
export function decodeStatus(object: ProtobufObject): KubeStatus {
  const reader = new BinaryReader(object.raw);
  const status: KubeStatus = { kind: object.kind, apiVersion: object.apiVersion };
  readFields(reader, reader.len, (field, wireType) => {
    if (field !== Status.code && wireType !== WireType.LengthDelimited) return false;
    if (readStringField(reader, status, STATUS_STRINGS, field)) return true;
    switch (field) {
      case Status.details:
        status.details = readMessage(reader, (end) => decodeStatusDetails(reader, end));
        return true;
      case Status.code: {
        if (wireType !== WireType.Varint) return false;
        // Always sent; `omitempty` in the JSON.
        const code = reader.int32();
        if (code !== 0) status.code = code;
        return true;
      }
    }
    return false;
  });
  return status;
}

function decodeStatusDetails(reader: BinaryReader, end: number): KubeStatusDetails {
  const details: KubeStatusDetails = {};
  readFields(reader, end, (field, wireType) => {
    if (field !== StatusDetails.retryAfterSeconds && wireType !== WireType.LengthDelimited) return false;
    if (readStringField(reader, details, STATUS_DETAILS_STRINGS, field)) return true;
    switch (field) {
      case StatusDetails.causes:
        details.causes = appended(
          details.causes,
          readMessage(reader, (causeEnd) => decodeStatusCause(reader, causeEnd)),
        );
        return true;
      case StatusDetails.retryAfterSeconds:
        if (wireType !== WireType.Varint) return false;
        details.retryAfterSeconds = reader.int32();
        if (details.retryAfterSeconds === 0) delete details.retryAfterSeconds;
        return true;
    }
    return false;
  });
  return details;
}

/** `metav1.StatusCause`'s fields by number: `reason` is Go's `Type`. */
const STATUS_CAUSE_STRINGS: StringFields<KubeStatusCause> = {
  [StatusCause.reason]: 'reason',
  [StatusCause.message]: 'message',
  [StatusCause.field]: 'field',
};

function decodeStatusCause(reader: BinaryReader, end: number): KubeStatusCause {
  const cause: KubeStatusCause = {};
  readFields(reader, end, (field, wireType) => {
    return (
      wireType === WireType.LengthDelimited && readStringField(reader, cause, STATUS_CAUSE_STRINGS, field)
    );
  });
  return cause;
}

/** A message's `omitempty` string fields by number: the key each one sets in the decoded object. */
export type StringFields<T> = Readonly<Partial<Record<number, keyof T & string>>>;

/**
 * Reads the string field `field` (a length-delimited one) into the key `names` gives it, as Go's
 * `omitempty` JSON has it: absent when empty. False when `names` has no such field, so that the caller
 * goes on to its other fields.
 */
export function readStringField<T extends object>(
  reader: BinaryReader,
  target: T,
  names: StringFields<T>,
  field: number,
): boolean {
  const key = names[field];
  if (key === undefined) return false;
  const value = reader.string();
  if (value !== '') (target as Record<string, unknown>)[key] = value;
  return true;
}

/**
 * Splits a protobuf watch stream into its frames: each is a 4-byte big-endian length, then that many
 * bytes (one `metav1.WatchEvent` message). TCP chunks cut frames anywhere.
 */
export class FrameDecoder {
  #chunks: Buffer[] = [];
  #length = 0;
  /** Bytes needed before the next frame can be complete: concatenating sooner would be wasted work. */
  #needed = 4;

  /** Feeds one chunk; returns the frames it completed. */
  push(chunk: Buffer): Buffer[] {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    if (this.#length < this.#needed) return [];
    let data = this.#chunks.length === 1 ? chunk : Buffer.concat(this.#chunks, this.#length);
    const frames: Buffer[] = [];
    for (;;) {
      if (data.length < 4) {
        this.#needed = 4;
        break;
      }
      const end = 4 + data.readUInt32BE(0);
      if (data.length < end) {
        this.#needed = end;
        break;
      }
      frames.push(data.subarray(4, end));
      data = data.subarray(end);
    }
    this.#chunks = data.length === 0 ? [] : [data];
    this.#length = data.length;
    return frames;
  }

  /** Bytes of an unfinished frame at end of stream (0 if the stream ended on a frame boundary). */
  pendingBytes(): number {
    return this.#length;
  }
}
