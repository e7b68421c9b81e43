import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  coreV1Fields,
  MAGIC,
  MAP_ENTRY,
  metaV1Fields,
  resourceFields,
  runtimeFields,
} from './proto-fields.ts';

/** The vendored generated.proto of each table (see vendor/README.md). */
const PROTO_FILES = {
  runtime: 'k8s.io/apimachinery/pkg/runtime/generated.proto',
  metaV1: 'k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto',
  resource: 'k8s.io/apimachinery/pkg/api/resource/generated.proto',
  coreV1: 'k8s.io/api/core/v1/generated.proto',
} as const;

const TABLES: Record<keyof typeof PROTO_FILES, Record<string, Record<string, number>>> = {
  runtime: runtimeFields,
  metaV1: metaV1Fields,
  resource: resourceFields,
  coreV1: coreV1Fields,
};

/**
 * The field numbers of every top-level message of a generated.proto, by message and field name. The
 * files are go-to-protobuf's output: one field per line (`optional string name = 1;`), nested
 * messages none, so a field line belongs to the message whose braces hold it.
 */
function parseProto(text: string): Map<string, Map<string, number>> {
  const messages = new Map<string, Map<string, number>>();
  let current: Map<string, number> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*/, '').trim();
    const opening = /^message (\w+) \{$/.exec(line);
    if (opening !== null) {
      current = new Map();
      messages.set(opening[1] as string, current);
      continue;
    }
    if (line === '}') {
      current = undefined;
      continue;
    }
    const field = /^(?:optional |repeated |required )?(?:map<[\w.]+, ?[\w.]+>|[\w.]+) (\w+) = (\d+);$/.exec(
      line,
    );
    if (field !== null && current !== undefined) current.set(field[1] as string, Number(field[2]));
  }
  return messages;
}

function vendored(file: string): Map<string, Map<string, number>> {
  return parseProto(readFileSync(new URL(`vendor/${file}`, import.meta.url), 'utf8'));
}

describe('the protobuf field table', () => {
  for (const [table, file] of Object.entries(PROTO_FILES) as [keyof typeof PROTO_FILES, string][]) {
    it(`numbers every field of ${table} as ${file} does`, () => {
      const messages = vendored(file);
      for (const [message, fields] of Object.entries(TABLES[table])) {
        const proto = messages.get(message);
        assert.ok(proto, `${file} has a message ${message}`);
        for (const [field, number] of Object.entries(fields)) {
          assert.equal(proto.get(field), number, `${table}.${message}.${field}`);
        }
      }
    });
  }

  it("reads the vendored files whole: Pod's fields, a map field and a repeated one", () => {
    const core = vendored(PROTO_FILES.coreV1);
    assert.deepEqual(Object.fromEntries(core.get('Pod') ?? []), { metadata: 1, spec: 2, status: 3 });
    assert.equal(core.get('PodSpec')?.get('nodeSelector'), 7);
    assert.equal(core.get('PodSpec')?.get('containers'), 2);
    assert.ok(core.size > 200, 'every message of core/v1');
  });

  it('every list kind numbers metadata and items as metav1.List', () => {
    const lists = [...vendored(PROTO_FILES.coreV1)].filter(([name]) => name.endsWith('List'));
    assert.ok(lists.length >= 16, `${lists.length} list kinds`);
    for (const [name, fields] of lists) {
      assert.deepEqual(
        [fields.get('metadata'), fields.get('items')],
        [metaV1Fields.List.metadata, metaV1Fields.List.items],
        name,
      );
    }
  });

  it('names at least one message in every table, and at least one field in every message', () => {
    for (const [table, messages] of Object.entries({ ...TABLES, MAP_ENTRY: { MAP_ENTRY } })) {
      assert.ok(Object.keys(messages).length > 0, table);
      for (const [message, fields] of Object.entries(messages)) {
        assert.ok(Object.keys(fields).length > 0, `${table}.${message}`);
      }
    }
    assert.deepEqual(MAP_ENTRY, { key: 1, value: 2 });
  });

  it('MAGIC is k8s and a NUL', () => {
    assert.equal(Buffer.from(MAGIC).toString('latin1'), 'k8s\0');
  });
});
