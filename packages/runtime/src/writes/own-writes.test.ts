import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@loopwright/client';
import { OwnWrites } from './own-writes.ts';

const KEY = 'ns/a';
/** A write conditional on the version it replaced. */
const EXACT = { exact: true };
/** An unconditional write: it replaced the version the writer knew, or a newer one. */
const UNCONDITIONAL = { exact: false };
const version = (resourceVersion: string, uid = 'uid-1'): KubeObject => ({
  metadata: { namespace: 'ns', name: 'a', uid, resourceVersion },
});

describe('OwnWrites.latest', () => {
  it('is the cached object when nothing was written', () => {
    const writes = new OwnWrites();
    const cached = version('1');
    assert.equal(writes.latest(KEY, cached), cached);
  });

  it('is the written object while the cache holds the version the write replaced', () => {
    const writes = new OwnWrites();
    const written = version('2');
    writes.wrote(KEY, '1', written, EXACT);
    assert.equal(writes.latest(KEY, version('1')), written);
    assert.equal(writes.latest(KEY, version('1')), written, 'until the cache catches up');
    assert.equal(writes.size, 1);
  });

  it('is the last write after several, while the cache holds any version they replaced', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    const last = version('3');
    writes.wrote(KEY, '2', last, EXACT);
    assert.equal(writes.latest(KEY, version('1')), last);
    assert.equal(writes.latest(KEY, version('2')), last);
  });

  it('is the cached object once the cache shows the write, and forgets the write', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    const cached = version('2');
    assert.equal(writes.latest(KEY, cached), cached);
    assert.equal(writes.size, 0);
    assert.equal(writes.latest(KEY, version('1'))?.metadata?.resourceVersion, '1', 'forgotten');
  });

  it("is the cached object when it shows someone else's newer version (never compared for order)", () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '5', version('6'), EXACT);
    const newer = version('10');
    assert.equal(writes.latest(KEY, newer), newer);
    assert.equal(writes.size, 0);
  });

  it('is the cached object when the name now holds another object (a different uid)', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    const recreated = version('1', 'uid-2');
    assert.equal(writes.latest(KEY, recreated), recreated);
    assert.equal(writes.size, 0);
  });

  it('a write to a re-created object starts over instead of mixing in the old object’s versions', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    const written = version('8', 'uid-2');
    writes.wrote(KEY, '7', written, EXACT);
    assert.equal(writes.latest(KEY, version('7', 'uid-2')), written);
    assert.equal(writes.latest(KEY, version('1', 'uid-2'))?.metadata?.resourceVersion, '1');
  });

  it('is undefined when the cache no longer has the object, and forgets the write', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    assert.equal(writes.latest(KEY, undefined), undefined);
    assert.equal(writes.size, 0);
  });

  it('forget drops the write', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    writes.forget(KEY);
    const cached = version('1');
    assert.equal(writes.latest(KEY, cached), cached);
  });
});

describe('OwnWrites.isEcho', () => {
  it('no write: no update is an echo', () => {
    assert.equal(new OwnWrites().isEcho(KEY, version('1'), version('2')), false);
  });

  it('the update from the replaced version to the written one is the echo, and the cache has caught up', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    assert.equal(writes.isEcho(KEY, version('1'), version('2')), true);
    assert.equal(writes.size, 0);
  });

  it('updates between versions of several writes are echoes; the entry lasts until the last one shows', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    writes.wrote(KEY, '2', version('3'), EXACT);
    assert.equal(writes.isEcho(KEY, version('1'), version('2')), true);
    assert.equal(writes.size, 1);
    assert.equal(writes.isEcho(KEY, version('2'), version('3')), true);
    assert.equal(writes.size, 0);
  });

  it("an update to someone else's version is not an echo, and drops the entry", () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('3'), EXACT);
    assert.equal(writes.isEcho(KEY, version('1'), version('2')), false);
    assert.equal(writes.size, 0);
  });

  it("an update to our version from someone else's (a write that did not replace what the cache held) is not an echo", () => {
    const writes = new OwnWrites();
    // An unconditional write: it replaced version 1 as far as we knew, but landed on someone's version 2.
    writes.wrote(KEY, '1', version('3'), EXACT);
    assert.equal(writes.isEcho(KEY, version('2'), version('3')), false);
  });

  it('a relist that skipped to our version from a version before the one we replaced is not an echo', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '5', version('6'), EXACT);
    assert.equal(writes.isEcho(KEY, version('4'), version('6')), false);
  });

  it('a resync (the same object twice) is never an echo', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    const cached = version('1');
    assert.equal(writes.isEcho(KEY, cached, cached), false);
    assert.equal(writes.size, 1, 'the cache still holds a replaced version');
  });

  it('a re-created object at our version number is not an echo', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    assert.equal(writes.isEcho(KEY, version('1'), version('2', 'uid-2')), false);
    assert.equal(writes.size, 0);
  });
  it('after an unconditional write no update is an echo (it may hide a version a relist skipped), though the overlay serves the write', () => {
    const writes = new OwnWrites();
    const written = version('3');
    writes.wrote(KEY, '1', written, UNCONDITIONAL);
    assert.equal(writes.latest(KEY, version('1')), written);
    assert.equal(writes.isEcho(KEY, version('1'), version('3')), false);
    assert.equal(writes.size, 0, 'the cache caught up');
  });

  it('one unconditional write among conditional ones makes none of their updates an echo', () => {
    const writes = new OwnWrites();
    writes.wrote(KEY, '1', version('2'), EXACT);
    writes.wrote(KEY, '2', version('3'), UNCONDITIONAL);
    assert.equal(writes.isEcho(KEY, version('1'), version('2')), false);
  });
});
