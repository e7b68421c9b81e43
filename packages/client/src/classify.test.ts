import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from './api-error.ts';
import {
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isInternalError,
  isInvalid,
  isNotFound,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
  isUnauthorized,
} from './classify.ts';

function status(code: number, reason: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: `${reason} happened`,
    reason,
    code,
    ...extra,
  });
}

/** What the transport throws for an error response with this status and body. */
function apiError(code: number, body: string): KubeApiError {
  return KubeApiError.fromResponse(code, body, undefined, { method: 'GET', path: '/api/v1/x' });
}

const predicates = {
  isNotFound,
  isAlreadyExists,
  isConflict,
  isGone,
  isForbidden,
  isUnauthorized,
  isTooManyRequests,
  isInvalid,
  isBadRequest,
  isServerTimeout,
  isTimeout,
  isInternalError,
  isServiceUnavailable,
};
type Name = keyof typeof predicates;

function matching(error: unknown): Name[] {
  return (Object.keys(predicates) as Name[]).filter((name) => predicates[name](error));
}

describe('classification by Status.reason', () => {
  const cases: [number, string, Name[]][] = [
    [404, 'NotFound', ['isNotFound']],
    [409, 'AlreadyExists', ['isAlreadyExists']],
    [409, 'Conflict', ['isConflict']],
    [410, 'Gone', ['isGone']],
    [410, 'Expired', ['isGone']],
    [403, 'Forbidden', ['isForbidden']],
    [401, 'Unauthorized', ['isUnauthorized']],
    [429, 'TooManyRequests', ['isTooManyRequests']],
    [422, 'Invalid', ['isInvalid']],
    [400, 'BadRequest', ['isBadRequest']],
    [500, 'ServerTimeout', ['isServerTimeout']],
    [504, 'Timeout', ['isTimeout']],
    [500, 'InternalError', ['isInternalError']],
    [503, 'ServiceUnavailable', ['isServiceUnavailable']],
  ];
  for (const [code, reason, expected] of cases) {
    it(`${code} ${reason} -> ${expected.join(', ')} only`, () => {
      assert.deepEqual(matching(apiError(code, status(code, reason))), expected);
    });
  }

  it('a known reason wins over a contradicting code (no code fallback)', () => {
    // A 404 whose Status says Forbidden (e.g. a webhook) is Forbidden, not NotFound.
    assert.deepEqual(matching(apiError(404, status(404, 'Forbidden'))), ['isForbidden']);
  });

  it('a message mentioning "not found" does not make an error NotFound', () => {
    const error = apiError(
      500,
      status(500, 'InternalError', { message: 'pod "x" not found, conflict, forbidden' }),
    );
    assert.deepEqual(matching(error), ['isInternalError']);
  });
});

describe('code fallback when the reason is unknown or absent', () => {
  const cases: [number, Name[]][] = [
    [404, ['isNotFound']],
    [409, ['isConflict']], // never AlreadyExists: 409 alone is ambiguous
    [410, ['isGone']],
    [403, ['isForbidden']],
    [401, ['isUnauthorized']],
    [429, ['isTooManyRequests']],
    [422, ['isInvalid']],
    [400, ['isBadRequest']],
    [504, ['isTimeout']],
    [500, ['isInternalError']], // never ServerTimeout: it needs the reason
    [503, ['isServiceUnavailable']],
  ];
  for (const [code, expected] of cases) {
    it(`${code} with a non-Status body -> ${expected.join(', ')}`, () => {
      assert.deepEqual(matching(apiError(code, '<html>proxy error</html>')), expected);
    });
  }

  it('a 401 without any body is Unauthorized', () => {
    assert.deepEqual(matching(apiError(401, '')), ['isUnauthorized']);
  });

  it('429 counts as TooManyRequests whatever the reason says', () => {
    assert.equal(isTooManyRequests(apiError(429, status(429, 'SomethingNew'))), true);
    assert.equal(isTooManyRequests(apiError(429, status(429, 'Forbidden'))), true);
  });
});

describe('what the predicates look at', () => {
  it('finds an API error anywhere in a cause chain (errors.As semantics)', () => {
    const wrapped = new Error('reconcile failed', {
      cause: new Error('update status', { cause: apiError(409, status(409, 'Conflict')) }),
    });
    assert.deepEqual(matching(wrapped), ['isConflict']);
  });

  it('a watch ERROR event classifies like the response it stands for', () => {
    assert.deepEqual(matching(KubeApiError.fromStatus({ code: 410, reason: 'Expired' })), ['isGone']);
    // Without a code the event counts as a 500: the reason alone says TooManyRequests.
    assert.deepEqual(matching(KubeApiError.fromStatus({ reason: 'TooManyRequests' })), ['isTooManyRequests']);
  });

  it('failures without a response, and anything that is not a KubeApiError, match nothing', () => {
    const request = { method: 'GET', path: '/api/v1/x' };
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    assert.deepEqual(matching(KubeApiError.noResponse(refused, request, false)), []);
    assert.deepEqual(matching(KubeApiError.undecodable(200, new SyntaxError('bad'), request)), []);
    assert.deepEqual(matching(refused), []);
    assert.deepEqual(matching(undefined), []);
    assert.deepEqual(matching('NotFound'), []);
    assert.deepEqual(matching({ status: 404, reason: 'NotFound' }), []);
  });
});
