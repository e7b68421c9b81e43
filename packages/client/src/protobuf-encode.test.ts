import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeObject, type MessageSchema } from './protobuf-encode.ts';
import { unwrapObject } from './protobuf.ts';

/** The message inside the envelope, as hex, for schemas of a single message. */
function messageHex(schema: MessageSchema, value: Record<string, unknown>): string {
  return Buffer.from(unwrapObject(encodeObject('v1', 'Thing', schema, value)).raw).toString('hex');
}

const hex = (...parts: string[]): string => parts.join('').replaceAll(' ', '');
const text = (value: string): string => Buffer.from(value).toString('hex');

describe('encodeObject', () => {
  it('wraps the message as the API server reads it: k8s\\0, then a runtime.Unknown of its type', () => {
    const bytes = encodeObject('apps/v1', 'Deployment', { name: [1, 'string'] }, { name: 'a' });
    assert.equal(Buffer.from(bytes.subarray(0, 4)).toString('hex'), '6b387300');
    assert.equal(
      Buffer.from(bytes.subarray(4)).toString('hex'),
      hex('0a 15', '0a 07', text('apps/v1'), '12 0a', text('Deployment'), '12 03', '0a 01', text('a')),
    );
    const object = unwrapObject(bytes);
    assert.equal(object.apiVersion, 'apps/v1');
    assert.equal(object.kind, 'Deployment');
  });

  it("takes apiVersion and kind from its arguments, not as the message's fields", () => {
    assert.equal(messageHex({}, { apiVersion: 'v1', kind: 'Pod' }), '');
  });

  it('writes strings as UTF-8, and an empty one as present', () => {
    assert.equal(
      messageHex({ a: [1, 'string'], b: [2, 'string'] }, { a: 'ü✓', b: '' }),
      hex('0a 05', text('ü✓'), '12 00'),
    );
  });

  it('writes false as well as true: absent would mean the field unset, which the server defaults', () => {
    assert.equal(
      messageHex({ t: [1, 'bool'], f: [30, 'bool'] }, { t: true, f: false }),
      hex('08 01', 'f0 01 00'),
    );
  });

  it('writes int64 as a varint, negatives in ten bytes as Go does', () => {
    assert.equal(
      messageHex({ a: [2, 'int64'], b: [3, 'int64'], c: [4, 'int64'] }, { a: 65534, b: 0, c: -1 }),
      hex('10 fe ff 03', '18 00', '20 ff ff ff ff ff ff ff ff ff 01'),
    );
  });

  it('writes a repeated string item by item, in order, empty items included', () => {
    assert.equal(
      messageHex({ command: [3, 'strings'] }, { command: ['/bin/sh', '-c', ''] }),
      hex('1a 07', text('/bin/sh'), '1a 02', text('-c'), '1a 00'),
    );
  });

  it('writes a quantity as its text, and a number as JSON writes it, which the server parses alike', () => {
    const quantity: MessageSchema = { q: [1, 'quantity'] };
    assert.equal(messageHex(quantity, { q: '500m' }), hex('0a 06 0a 04', text('500m')));
    assert.equal(messageHex(quantity, { q: 0.5 }), hex('0a 05 0a 03', text('0.5')));
    assert.equal(messageHex(quantity, { q: 1e21 }), hex('0a 07 0a 05', text('1e+21')));
    assert.equal(messageHex(quantity, { q: 2 }), hex('0a 03 0a 01', text('2')));
  });

  it('writes a map as one entry per key (key 1, value 2), skipping null and undefined values', () => {
    assert.equal(
      messageHex({ labels: [11, { map: 'string' }] }, { labels: { a: '1', b: '', c: null, d: undefined } }),
      hex('5a 06 0a 01', text('a'), '12 01', text('1'), '5a 05 0a 01', text('b'), '12 00'),
    );
    assert.equal(
      messageHex({ limits: [1, { map: 'quantity' }] }, { limits: { cpu: '1' } }),
      hex('0a 0a 0a 03', text('cpu'), '12 03 0a 01', text('1')),
    );
  });

  it('writes an embedded message, an empty one as present, and a repeated one item by item', () => {
    const schema: MessageSchema = {
      one: [1, { message: { name: [1, 'string'] } }],
      many: [2, { messages: { name: [1, 'string'], on: [2, 'bool'] } }],
    };
    assert.equal(
      messageHex(schema, { one: { name: 'x' }, many: [{ name: 'a' }, {}, { on: true }] }),
      hex('0a 03 0a 01', text('x'), '12 03 0a 01', text('a'), '12 00', '12 02 10 01'),
    );
    assert.equal(messageHex(schema, { one: {} }), '0a00');
  });

  it('leaves null and undefined fields out, as JSON would', () => {
    assert.equal(messageHex({ a: [1, 'string'], b: [2, 'bool'] }, { a: null, b: undefined }), '');
  });

  it('refuses a field the schema does not list, naming it, instead of dropping it', () => {
    const schema: MessageSchema = {
      spec: [2, { message: { containers: [2, { messages: { name: [1, 'string'] } }] } }],
    };
    assert.throws(
      () =>
        encodeObject('v1', 'Pod', schema, {
          spec: { containers: [{ name: 'a' }, { name: 'b', tty: true }] },
        }),
      { name: 'TypeError', message: 'Pod.spec.containers[1].tty: not a field this protobuf encoding writes' },
    );
    assert.throws(() => encodeObject('v1', 'Pod', schema, { spec: { nodeName: 'n' } }), {
      message: 'Pod.spec.nodeName: not a field this protobuf encoding writes',
    });
    // Names an object inherits are not fields either.
    assert.throws(
      () => encodeObject('v1', 'Pod', schema, JSON.parse('{"toString": "x"}') as Record<string, unknown>),
      {
        message: 'Pod.toString: not a field this protobuf encoding writes',
      },
    );
  });

  it('refuses a value of the wrong type, naming where', () => {
    const schema: MessageSchema = {
      name: [1, 'string'],
      on: [2, 'bool'],
      count: [3, 'int64'],
      args: [4, 'strings'],
      size: [5, 'quantity'],
      labels: [6, { map: 'string' }],
      meta: [7, { message: { name: [1, 'string'] } }],
      items: [8, { messages: { name: [1, 'string'] } }],
    };
    const refused = (value: Record<string, unknown>, message: string): void => {
      assert.throws(() => encodeObject('v1', 'Thing', schema, value), { name: 'TypeError', message });
    };
    refused({ name: 1 }, 'Thing.name: expected a string, got a number');
    refused({ on: 'true' }, 'Thing.on: expected a boolean, got a string');
    refused({ count: '1' }, 'Thing.count: expected a number, got a string');
    refused({ count: 1.5 }, 'Thing.count: expected an integer, got 1.5');
    refused({ count: 2 ** 53 }, `Thing.count: expected an integer, got ${2 ** 53}`);
    refused({ args: 'a' }, 'Thing.args: expected an array, got a string');
    refused({ args: ['a', 2] }, 'Thing.args[1]: expected a string, got a number');
    refused(
      { size: Number.NaN },
      'Thing.size: expected a quantity (a string or a finite number), got a number',
    );
    refused({ size: true }, 'Thing.size: expected a quantity (a string or a finite number), got a boolean');
    refused({ labels: ['a'] }, 'Thing.labels: expected an object, got an array');
    refused({ labels: 'a' }, 'Thing.labels: expected an object, got a string');
    refused(
      { size: Number.POSITIVE_INFINITY },
      'Thing.size: expected a quantity (a string or a finite number), got a number',
    );
    refused({ items: [[]] }, 'Thing.items[0]: expected an object, got an array');
    refused(
      { on: undefined, name: 'a', meta: { name: false } },
      'Thing.meta.name: expected a string, got a boolean',
    );
    refused({ labels: { 'a.b/c': 1 } }, 'Thing.labels["a.b/c"]: expected a string, got a number');
    refused({ meta: [] }, 'Thing.meta: expected an object, got an array');
    refused({ meta: 'x' }, 'Thing.meta: expected an object, got a string');
    refused({ items: {} }, 'Thing.items: expected an array, got an object');
    refused({ items: [null] }, 'Thing.items[0]: expected an object, got null');
  });
});
