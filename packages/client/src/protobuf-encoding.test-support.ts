/**
 * Test inputs in the API server's protobuf encoding, built field by field with the wire writer as
 * k8s.io's generated.proto numbers them (the package itself only reads protobuf).
 */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { MAGIC, runtimeFields } from './proto-fields.ts';

const { Unknown, TypeMeta } = runtimeFields;

/**
 * An object as the API server sends one: `k8s\0`, then a `runtime.Unknown` of the given type holding
 * `raw`; `extra` writes more fields into the Unknown.
 */
export function protobufObject(
  apiVersion: string,
  kind: string,
  raw: Uint8Array,
  extra: (writer: BinaryWriter) => void = () => undefined,
): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(Unknown.typeMeta, WireType.LengthDelimited).fork();
  writer.tag(TypeMeta.apiVersion, WireType.LengthDelimited).string(apiVersion);
  writer.tag(TypeMeta.kind, WireType.LengthDelimited).string(kind);
  writer.join();
  writer.tag(Unknown.raw, WireType.LengthDelimited).bytes(raw);
  extra(writer);
  const unknown = writer.finish();
  const bytes = new Uint8Array(MAGIC.length + unknown.length);
  bytes.set(MAGIC);
  bytes.set(unknown, MAGIC.length);
  return bytes;
}

/** A frame of a protobuf watch stream: a 4-byte big-endian length, then the bytes. */
export function watchFrame(payload: Uint8Array | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
}
