import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnWrites } from './own-writes.ts';

const at = (
  resourceVersion: string,
  uid = 'u1',
  phase = '',
): { metadata: { uid: string; resourceVersion: string }; phase: string } => ({
  metadata: { uid, resourceVersion },
  phase,
});

describe('OwnWrites', () => {
  it('reads a cached copy at a version its own write replaced as the written object', () => {
    const writes = new OwnWrites<ReturnType<typeof at>>();
    const written = at('11', 'u1', 'RUNNING');
    writes.wrote('ns/a', '10', written);
    assert.equal(writes.latest('ns/a', at('10')), written);
    assert.equal(writes.size, 1, 'kept until the cache catches up');
  });

  it('drops the entry once the cache shows the write or anything newer', () => {
    const writes = new OwnWrites<ReturnType<typeof at>>();
    writes.wrote('ns/a', '10', at('11', 'u1', 'RUNNING'));
    const caughtUp = at('11', 'u1', 'RUNNING');
    assert.equal(writes.latest('ns/a', caughtUp), caughtUp);
    assert.equal(writes.size, 0);
    writes.wrote('ns/a', '11', at('12'));
    const newer = at('15');
    assert.equal(writes.latest('ns/a', newer), newer);
    assert.equal(writes.size, 0);
  });

  it('covers every version a sequence of writes replaced (claim, then its undo)', () => {
    const writes = new OwnWrites<ReturnType<typeof at>>();
    writes.wrote('ns/a', '10', at('11', 'u1', 'RUNNING'));
    const undone = at('12', 'u1', 'PENDING');
    writes.wrote('ns/a', '11', undone);
    assert.equal(writes.latest('ns/a', at('10')), undone);
    assert.equal(writes.latest('ns/a', at('11')), undone);
  });

  it('never applies a write to a re-created object of the same name', () => {
    const writes = new OwnWrites<ReturnType<typeof at>>();
    writes.wrote('ns/a', '10', at('11', 'old-uid', 'RUNNING'));
    const recreated = at('10', 'new-uid');
    assert.equal(writes.latest('ns/a', recreated), recreated);
    writes.wrote('ns/a', '20', at('21', 'old-uid'));
    writes.wrote('ns/a', '30', at('31', 'new-uid'));
    assert.equal(
      writes.latest('ns/a', at('20', 'new-uid')).metadata.resourceVersion,
      '20',
      'old uid forgotten',
    );
  });

  it('forgets a deleted object, and knows nothing of objects it never wrote', () => {
    const writes = new OwnWrites<ReturnType<typeof at>>();
    writes.wrote('ns/a', '10', at('11'));
    writes.forget('ns/a');
    const cached = at('10');
    assert.equal(writes.latest('ns/a', cached), cached);
    assert.equal(writes.latest('ns/b', cached), cached);
  });
});
