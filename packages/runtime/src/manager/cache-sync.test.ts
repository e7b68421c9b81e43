import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cacheSyncTimeoutApplies } from './cache-sync.ts';

const missingCrd = { resource: 'ats.cnat.programming-kubernetes.info', resourceMissing: true };
const forbidden = { resource: 'pods', resourceMissing: false };

describe('cacheSyncTimeoutApplies', () => {
  it('does not fail start-up while only missing resources keep caches from syncing', () => {
    assert.equal(cacheSyncTimeoutApplies([missingCrd]), false);
    assert.equal(
      cacheSyncTimeoutApplies([missingCrd, { ...missingCrd, resource: 'other.example.com' }]),
      false,
    );
  });

  it('fails start-up when any other cache has not synced', () => {
    assert.equal(cacheSyncTimeoutApplies([forbidden]), true);
    assert.equal(cacheSyncTimeoutApplies([missingCrd, forbidden]), true);
  });

  it('has nothing to fail when everything synced meanwhile', () => {
    assert.equal(cacheSyncTimeoutApplies([]), false);
  });
});
