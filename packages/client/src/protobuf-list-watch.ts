/**
 * Lists and watch events in the API server's protobuf encoding (see `protobuf.ts` for the wire and for why), decoded to the objects their JSON would give. An informer
 * of a built-in kind reads protobuf when its scope names a {@link ProtobufDecoder}; `readObjectMeta`
 * is the part of such a decoder that every kind shares.
 */
import {
  appended,
  BinaryReader,
  decodeStatus,
  readFields,
  readInt64,
  readMessage,
  readStringField,
  readStringMapEntry,
  readTime,
  type StringFields,
  unwrapObject,
  WireType,
} from './protobuf.ts';
import {
  itemKindOf,
  type KubeObject,
  type ListPage,
  type ObjectMeta,
  type OwnerReference,
  type WatchEvent,
} from './object.ts';
import { metaV1Fields, runtimeFields } from './proto-fields.ts';

const { List, ListMeta, WatchEvent: WatchEventFields, ObjectMeta: ObjectMetaFields } = metaV1Fields;
const { OwnerReference: OwnerReferenceFields, ManagedFieldsEntry, FieldsV1, ShardInfo } = metaV1Fields;
const { RawExtension } = runtimeFields;

/**
 * Decodes one object's message (a `Pod`'s bytes, say) to what its JSON would give, or at least to
 * every field the scope's transforms keep (a decoder may skip the rest, the spec of a pod the cache
 * drops anyway). `apiVersion` and `kind` are set by the caller. Write it on `readFields`, with
 * {@link readObjectMeta} for its `metadata`, numbering fields by `proto-fields.ts`.
 */
export type ProtobufDecoder<T extends KubeObject> = (message: Uint8Array) => T;

/** A list response (`PodList`...): every list kind numbers its `metadata` and `items` as `metav1.List`. */
export function decodeListPage<T extends KubeObject>(
  bytes: Uint8Array,
  decodeItem: ProtobufDecoder<T>,
): ListPage<T> {
  const list = unwrapObject(bytes);
  const kind = itemKindOf(list.kind);
  const page: ListPage<T> = { items: [], resourceVersion: '', continue: '' };
  const reader = new BinaryReader(list.raw);
  readFields(reader, reader.len, (field, wireType) => {
    if (wireType !== WireType.LengthDelimited) return false;
    if (field === List.metadata) {
      readMessage(reader, (end) => {
        readFields(reader, end, (metaField, metaWire) => {
          if (metaWire !== WireType.LengthDelimited) return false;
          if (metaField === ListMeta.resourceVersion) page.resourceVersion = reader.string();
          else if (metaField === ListMeta.continue) page.continue = reader.string();
          else if (metaField === ListMeta.shardInfo) {
            readMessage(reader, (infoEnd) => {
              readFields(reader, infoEnd, (infoField, infoWire) => {
                if (infoField !== ShardInfo.selector || infoWire !== WireType.LengthDelimited) return false;
                page.shardSelector = reader.string();
                return true;
              });
            });
          } else return false;
          return true;
        });
      });
      return true;
    }
    if (field !== List.items) return false;
    const item = decodeItem(reader.bytes());
    if (kind !== undefined) {
      item.apiVersion = list.apiVersion;
      item.kind = kind;
    }
    page.items.push(item);
    return true;
  });
  return page;
}

/** One frame of a protobuf watch: a `metav1.WatchEvent` whose object is wrapped as every object is. */
export function decodeWatchEvent<T extends KubeObject>(
  frame: Uint8Array,
  decodeItem: ProtobufDecoder<T>,
): WatchEvent<T> {
  let type = '';
  let objectBytes: Uint8Array | undefined;
  const reader = new BinaryReader(frame);
  readFields(reader, reader.len, (field, wireType) => {
    if (wireType !== WireType.LengthDelimited) return false;
    if (field === WatchEventFields.type) type = reader.string();
    else if (field === WatchEventFields.object) {
      readMessage(reader, (end) => {
        readFields(reader, end, (rawField, rawWire) => {
          if (rawField !== RawExtension.raw || rawWire !== WireType.LengthDelimited) return false;
          objectBytes = reader.bytes();
          return true;
        });
      });
    } else return false;
    return true;
  });
  if (objectBytes === undefined) throw new Error(`protobuf watch event ${type || '(no type)'} has no object`);
  const object = unwrapObject(objectBytes);
  if (object.kind === 'Status') return { type, object: decodeStatus(object) } as WatchEvent<T>;
  const item = decodeItem(object.raw);
  item.apiVersion = object.apiVersion;
  item.kind = object.kind;
  // The reflector checks the type as it does a JSON event's.
  return { type, object: item } as WatchEvent<T>;
}

/** `metav1.ObjectMeta`'s string fields by number. */
const OBJECT_META_STRINGS: StringFields<ObjectMeta & Record<string, unknown>> = {
  [ObjectMetaFields.name]: 'name',
  [ObjectMetaFields.generateName]: 'generateName',
  [ObjectMetaFields.namespace]: 'namespace',
  [ObjectMetaFields.selfLink]: 'selfLink',
  [ObjectMetaFields.uid]: 'uid',
  [ObjectMetaFields.resourceVersion]: 'resourceVersion',
};

/**
 * `metav1.ObjectMeta`, whole, as its JSON reads. Call it on the `metadata` field of a top-level kind's
 * message: `case coreV1Fields.Pod.metadata: pod.metadata = readObjectMeta(reader); return true;`.
 */
export function readObjectMeta(reader: BinaryReader): ObjectMeta {
  return readMessage(reader, (end) => {
    const meta: ObjectMeta & Record<string, unknown> = {};
    readFields(reader, end, (field, wireType) => {
      if (wireType === WireType.Varint) {
        if (field === ObjectMetaFields.generation) {
          const generation = readInt64(reader);
          if (generation !== 0) meta.generation = generation;
        } else if (field === ObjectMetaFields.deletionGracePeriodSeconds) {
          meta.deletionGracePeriodSeconds = readInt64(reader);
        } else return false;
        return true;
      }
      if (wireType !== WireType.LengthDelimited) return false;
      if (readStringField(reader, meta, OBJECT_META_STRINGS, field)) return true;
      switch (field) {
        case ObjectMetaFields.creationTimestamp:
          meta.creationTimestamp = readTime(reader) as string;
          return true;
        case ObjectMetaFields.deletionTimestamp: {
          // A pointer in Go: sent only when set.
          const deletion = readTime(reader);
          if (deletion !== null) meta.deletionTimestamp = deletion;
          return true;
        }
        case ObjectMetaFields.labels:
          readStringMapEntry(reader, (meta.labels ??= {}));
          return true;
        case ObjectMetaFields.annotations:
          readStringMapEntry(reader, (meta.annotations ??= {}));
          return true;
        case ObjectMetaFields.ownerReferences:
          meta.ownerReferences = appended(meta.ownerReferences, readOwnerReference(reader));
          return true;
        case ObjectMetaFields.finalizers:
          meta.finalizers = appended(meta.finalizers, reader.string());
          return true;
        case ObjectMetaFields.managedFields:
          meta.managedFields = appended(meta.managedFields, readManagedFieldsEntry(reader));
          return true;
      }
      return false;
    });
    return meta;
  });
}

/**
 * Its four strings are always in the JSON (no `omitempty`); the two flags only when set. Built whole at
 * the end: properties added to a literal after it was made go to a separate, larger store.
 */
function readOwnerReference(reader: BinaryReader): OwnerReference {
  return readMessage(reader, (end) => {
    let apiVersion = '';
    let kind = '';
    let name = '';
    let uid = '';
    let controller: boolean | undefined;
    let blockOwnerDeletion: boolean | undefined;
    readFields(reader, end, (field, wireType) => {
      if (wireType === WireType.Varint) {
        if (field === OwnerReferenceFields.controller) controller = reader.bool();
        else if (field === OwnerReferenceFields.blockOwnerDeletion) blockOwnerDeletion = reader.bool();
        else return false;
        return true;
      }
      if (wireType !== WireType.LengthDelimited) return false;
      if (field === OwnerReferenceFields.apiVersion) apiVersion = reader.string();
      else if (field === OwnerReferenceFields.kind) kind = reader.string();
      else if (field === OwnerReferenceFields.name) name = reader.string();
      else if (field === OwnerReferenceFields.uid) uid = reader.string();
      else return false;
      return true;
    });
    if (controller === undefined && blockOwnerDeletion === undefined) return { apiVersion, kind, name, uid };
    if (blockOwnerDeletion === undefined) return { apiVersion, kind, name, uid, controller };
    if (controller === undefined) return { apiVersion, kind, name, uid, blockOwnerDeletion };
    return { apiVersion, kind, name, uid, controller, blockOwnerDeletion };
  });
}

/** One decoder for every managedFields entry's JSON (a pod event carries several). */
const UTF8 = new TextDecoder();

/** `metav1.ManagedFieldsEntry`'s string fields by number. */
const MANAGED_FIELDS_ENTRY_STRINGS: StringFields<Record<string, unknown>> = {
  [ManagedFieldsEntry.manager]: 'manager',
  [ManagedFieldsEntry.operation]: 'operation',
  [ManagedFieldsEntry.apiVersion]: 'apiVersion',
  [ManagedFieldsEntry.fieldsType]: 'fieldsType',
  [ManagedFieldsEntry.subresource]: 'subresource',
};

/** A server-side apply record; `fieldsV1` is JSON in the protobuf too. */
function readManagedFieldsEntry(reader: BinaryReader): Record<string, unknown> {
  return readMessage(reader, (end) => {
    const entry: Record<string, unknown> = {};
    readFields(reader, end, (field, wireType) => {
      if (wireType !== WireType.LengthDelimited) return false;
      if (readStringField(reader, entry, MANAGED_FIELDS_ENTRY_STRINGS, field)) return true;
      if (field === ManagedFieldsEntry.time) {
        const time = readTime(reader);
        if (time !== null) entry.time = time;
      } else if (field === ManagedFieldsEntry.fieldsV1) {
        readMessage(reader, (fieldsEnd) => {
          readFields(reader, fieldsEnd, (rawField, rawWire) => {
            if (rawField !== FieldsV1.Raw || rawWire !== WireType.LengthDelimited) return false;
            entry.fieldsV1 = JSON.parse(UTF8.decode(reader.bytes())) as unknown;
            return true;
          });
        });
      } else return false;
      return true;
    });
    return entry;
  });
}
