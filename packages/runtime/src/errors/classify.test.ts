import { ApiException } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KubeApiError,
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
  toKubeApiError,
} from './index.ts';

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

/** What client-node's generated APIs throw: body is the raw response text. */
function apiException(
  code: number,
  body: string | undefined,
  headers: Record<string, string> = {},
): ApiException<unknown> {
  return new ApiException(code, 'Unknown API Status Code!', body, headers);
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
      assert.deepEqual(matching(apiException(code, status(code, reason))), expected);
    });
  }

  it('a known reason wins over a contradicting code (no code fallback)', () => {
    // A 404 whose Status says Forbidden (e.g. a webhook) is Forbidden, not NotFound.
    assert.deepEqual(matching(apiException(404, status(404, 'Forbidden'))), ['isForbidden']);
  });

  it('a message mentioning "not found" does not make an error NotFound', () => {
    const error = apiException(
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
      assert.deepEqual(matching(apiException(code, '<html>proxy error</html>')), expected);
    });
  }

  it('a 401 from a generated API (no body at all) is Unauthorized', () => {
    assert.deepEqual(matching(apiException(401, undefined)), ['isUnauthorized']);
  });

  it('429 counts as TooManyRequests whatever the reason says', () => {
    assert.equal(isTooManyRequests(apiException(429, status(429, 'SomethingNew'))), true);
    assert.equal(isTooManyRequests(apiException(429, status(429, 'Forbidden'))), true);
  });
});

describe('toKubeApiError', () => {
  it('parses the Status body of an ApiException and keeps it as cause', () => {
    const exception = apiException(
      422,
      status(422, 'Invalid', {
        message: 'At.example.com "x" is invalid: spec.schedule: Invalid value',
        details: {
          name: 'x',
          group: 'example.com',
          kind: 'At',
          causes: [{ field: 'spec.schedule', type: 'FieldValueInvalid' }],
        },
      }),
    );
    const error = toKubeApiError(exception);
    assert.ok(error instanceof KubeApiError);
    assert.equal(error.status, 422);
    assert.equal(error.reason, 'Invalid');
    assert.equal(error.details?.causes?.[0]?.field, 'spec.schedule');
    assert.equal(error.cause, exception);
    assert.match(error.message, /spec\.schedule: Invalid value/);
    assert.doesNotMatch(error.message, /Headers/);
  });

  it('finds an API error anywhere in a cause chain (errors.As semantics)', () => {
    const wrapped = new Error('reconcile failed', {
      cause: new Error('update status', { cause: apiException(409, status(409, 'Conflict')) }),
    });
    assert.equal(isConflict(wrapped), true);
    assert.equal(toKubeApiError(wrapped)?.reason, 'Conflict');
  });

  it('returns undefined for non-API errors and classifiers say false', () => {
    const network = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    assert.equal(toKubeApiError(network), undefined);
    assert.deepEqual(matching(network), []);
    assert.deepEqual(matching(undefined), []);
    assert.deepEqual(matching('NotFound'), []);
    assert.deepEqual(matching({ code: 404 }), []);
  });

  it('takes retryAfterSeconds from Status details, else from the Retry-After header', () => {
    const fromDetails = toKubeApiError(
      apiException(429, status(429, 'TooManyRequests', { details: { retryAfterSeconds: 7 } }), {
        'retry-after': '3',
      }),
    );
    assert.equal(fromDetails?.retryAfterSeconds, 7);
    const fromHeader = toKubeApiError(
      apiException(429, status(429, 'TooManyRequests'), { 'retry-after': '3' }),
    );
    assert.equal(fromHeader?.retryAfterSeconds, 3);
    assert.equal(toKubeApiError(apiException(404, status(404, 'NotFound')))?.retryAfterSeconds, undefined);
  });
});

describe('KubeApiError.fromResponse', () => {
  it('reads the Status of a fetch Response', async () => {
    const response = new Response(status(404, 'NotFound'), {
      status: 404,
      headers: { 'content-type': 'application/json' },
    });
    const error = await KubeApiError.fromResponse(response, 'GET /api/v1/namespaces/x/pods/y');
    assert.equal(isNotFound(error), true);
    assert.equal(error.status, 404);
  });

  it('keeps the HTTP status and names the request when the body is not a Status', async () => {
    const error = await KubeApiError.fromResponse(
      new Response('upstream connect error', { status: 503 }),
      'GET /healthz',
    );
    assert.equal(error.status, 503);
    assert.equal(error.reason, '');
    assert.match(error.message, /GET \/healthz: HTTP 503: upstream connect error/);
    assert.equal(isServiceUnavailable(error), true);
  });
});
