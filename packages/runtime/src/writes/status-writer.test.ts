import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KubeApiError,
  type KubeObject,
  type ObjectKey,
  type Patch,
  type PatchOptions,
  type Resource,
} from '@loopwright/client';
import { OwnWrites } from './own-writes.ts';
import { ownStatusWriter } from './status-writer.ts';

const KEY = 'ns/a';
const EXACT = { exact: true };
const OBJECT_KEY = { namespace: 'ns', name: 'a' };
const at = (resourceVersion: string): KubeObject => ({
  metadata: { namespace: 'ns', name: 'a', uid: 'uid-1', resourceVersion },
});

/** A handle whose status patches bump the version by one, or fail with `error`. */
function fakeResource(start: number, error?: Error) {
  const calls: { key: ObjectKey; patch: Patch; options: PatchOptions | undefined }[] = [];
  let next = start;
  const status = {
    patch: (key: ObjectKey, patch: Patch, options?: PatchOptions) => {
      calls.push({ key, patch, options });
      return error === undefined ? Promise.resolve(at(String(++next))) : Promise.reject(error);
    },
  };
  return { resource: { status } as unknown as Resource<KubeObject>, calls };
}

describe('ownStatusWriter', () => {
  it('patches the status subresource of the key and resolves with the written object', async () => {
    const { resource, calls } = fakeResource(1);
    const writes = new OwnWrites();
    const writer = ownStatusWriter(resource, writes, KEY, OBJECT_KEY, at('1'), () => '1');
    const options = { resourceVersion: '1', fieldManager: 'me' };
    const written = await writer.patch({ merge: { status: { phase: 'x' } } }, options);
    assert.equal(written.metadata?.resourceVersion, '2');
    assert.deepEqual(calls, [{ key: OBJECT_KEY, patch: { merge: { status: { phase: 'x' } } }, options }]);
  });

  it('remembers the write as replacing the precondition version', async () => {
    const { resource } = fakeResource(4);
    const writes = new OwnWrites();
    const writer = ownStatusWriter(resource, writes, KEY, OBJECT_KEY, at('1'), () => '1');
    const written = await writer.patch({ merge: {} }, { resourceVersion: '4' });
    assert.equal(writes.latest(KEY, at('4')), written);
    assert.equal(writes.latest(KEY, at('1'))?.metadata?.resourceVersion, '1', 'not the version decided from');
  });

  it('an unconditional write replaced the object decided from; a second one, the first write', async () => {
    const { resource } = fakeResource(1);
    const writes = new OwnWrites();
    const writer = ownStatusWriter(resource, writes, KEY, OBJECT_KEY, at('1'), () => '1');
    await writer.patch({ merge: {} });
    const second = await writer.patch({ merge: {} });
    assert.equal(writes.latest(KEY, at('1')), second);
    assert.equal(writes.latest(KEY, at('2')), second);
  });

  it('remembers nothing when the cache already shows the write (its event came first)', async () => {
    const { resource } = fakeResource(1);
    const writes = new OwnWrites();
    writes.wrote(KEY, '0', at('1'), EXACT);
    const writer = ownStatusWriter(resource, writes, KEY, OBJECT_KEY, at('1'), () => '2');
    await writer.patch({ merge: {} }, { resourceVersion: '1' });
    assert.equal(writes.size, 0, 'an earlier write is forgotten too: the cache is past it');
  });

  it('remembers nothing when it cannot know the version replaced (no object, no precondition)', async () => {
    const { resource } = fakeResource(1);
    const writes = new OwnWrites();
    await ownStatusWriter(resource, writes, KEY, OBJECT_KEY, undefined, () => undefined).patch({ merge: {} });
    assert.equal(writes.size, 0);
  });

  it('a refused write rejects as the handle did and remembers nothing', async () => {
    const conflict = new KubeApiError('conflict', { status: 409, reason: 'Conflict' });
    const { resource } = fakeResource(1, conflict);
    const writes = new OwnWrites();
    const writer = ownStatusWriter(resource, writes, KEY, OBJECT_KEY, at('1'), () => '1');
    await assert.rejects(
      writer.patch({ merge: {} }, { resourceVersion: '1' }),
      (error) => error === conflict,
    );
    assert.equal(writes.size, 0);
  });
  it("a conditional write's echo is recognised; an unconditional write's is not (it may have landed on another version)", async () => {
    const conditional = new OwnWrites();
    await ownStatusWriter(fakeResource(1).resource, conditional, KEY, OBJECT_KEY, at('1'), () => '1').patch(
      { merge: {} },
      { resourceVersion: '1' },
    );
    assert.equal(conditional.isEcho(KEY, at('1'), at('2')), true);
    const unconditional = new OwnWrites();
    const written = await ownStatusWriter(
      fakeResource(1).resource,
      unconditional,
      KEY,
      OBJECT_KEY,
      at('1'),
      () => '1',
    ).patch({ merge: {} });
    assert.equal(unconditional.latest(KEY, at('1')), written, 'the overlay still serves it');
    assert.equal(unconditional.isEcho(KEY, at('1'), at('2')), false);
  });
});
