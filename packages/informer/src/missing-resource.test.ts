import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MISSING_RESOURCE_RELOG_MS,
  missingResourceMessage,
  shouldLogMissingResource,
} from './missing-resource.ts';

describe('missingResourceMessage', () => {
  it('names the CRD to install and the resource the API server does not serve', () => {
    assert.equal(
      missingResourceMessage({
        group: 'cnat.programming-kubernetes.info',
        version: 'v1alpha1',
        plural: 'ats',
      }),
      'CRD ats.cnat.programming-kubernetes.info is not installed (the API server does not serve ' +
        'cnat.programming-kubernetes.info/v1alpha1, Resource=ats); retrying until it is',
    );
  });

  it('names no CRD for the core group, where there can be none', () => {
    assert.equal(
      missingResourceMessage({ group: '', version: 'v1', plural: 'widgets' }),
      'resource /v1, Resource=widgets is not served by the API server; retrying until it is',
    );
  });
});

describe('shouldLogMissingResource', () => {
  it('logs the first failure at once', () => {
    assert.equal(shouldLogMissingResource(undefined, 5), true);
  });

  it('stays quiet for the interval after a line, then logs again', () => {
    assert.equal(shouldLogMissingResource(1000, 1000 + MISSING_RESOURCE_RELOG_MS - 1), false);
    assert.equal(shouldLogMissingResource(1000, 1000 + MISSING_RESOURCE_RELOG_MS), true);
    assert.equal(shouldLogMissingResource(0, 59_999, 60_000), false);
    assert.equal(shouldLogMissingResource(0, 60_000, 60_000), true);
  });
});
