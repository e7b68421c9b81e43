import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shardedInformers } from './shard-plan.ts';

const UID = 'object.metadata.uid';
const NAMESPACE = 'object.metadata.namespace';

describe('shardedInformers', () => {
  it('shards an informer every reader wants sharded on one field', () => {
    const plan = shardedInformers([
      { informer: 'ats', field: UID },
      { informer: 'pods', field: NAMESPACE },
      { informer: 'pods', field: NAMESPACE },
    ]);
    assert.deepEqual(
      [...plan],
      [
        ['ats', UID],
        ['pods', NAMESPACE],
      ],
    );
  });

  it('keeps whole an informer one reader needs whole, whichever comes first', () => {
    assert.deepEqual(
      [
        ...shardedInformers([
          { informer: 'secrets', field: UID },
          { informer: 'secrets', field: undefined },
        ]),
      ],
      [],
    );
    assert.deepEqual(
      [
        ...shardedInformers([
          { informer: 'secrets', field: undefined },
          { informer: 'secrets', field: UID },
        ]),
      ],
      [],
    );
  });

  it('keeps whole an informer two readers hash on different fields, even if a third agrees again', () => {
    const plan = shardedInformers([
      { informer: 'cms', field: UID },
      { informer: 'cms', field: NAMESPACE },
      { informer: 'cms', field: UID },
    ]);
    assert.deepEqual([...plan], []);
  });
});
