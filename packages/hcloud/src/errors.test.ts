import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HcloudError, isNotFound, isRateLimited, isRetryable, isUnauthorized } from './errors.ts';

const error = (status: number | undefined, code: string): HcloudError =>
  new HcloudError({ status, code, message: code });

describe('error classification', () => {
  it("retries exactly what hcloud-go's retry policy retries", () => {
    const retryable = [
      error(502, 'invalid_response'),
      error(504, 'invalid_response'),
      error(502, 'bad_gateway'),
      error(504, 'timeout'),
      error(409, 'conflict'),
      error(429, 'rate_limit_exceeded'),
      error(429, 'invalid_response'),
      error(undefined, 'timeout'),
    ];
    const final = [
      error(500, 'server_error'),
      error(500, 'invalid_response'),
      error(503, 'unavailable'),
      error(503, 'invalid_response'),
      error(503, 'maintenance'),
      error(423, 'locked'),
      error(undefined, 'network_error'),
      error(400, 'invalid_input'),
      error(401, 'unauthorized'),
      error(403, 'forbidden'),
      error(404, 'not_found'),
      error(404, 'invalid_response'),
      error(200, 'invalid_response'),
      error(undefined, 'aborted'),
      new Error('x'),
    ];
    for (const e of retryable) assert.equal(isRetryable(e), true, `${e.message} should be retryable`);
    for (const e of final) assert.equal(isRetryable(e), false, `${e.message} should not be retryable`);
  });

  it("calls a server gone only on the API's own 404 not_found", () => {
    assert.equal(isNotFound(error(404, 'not_found')), true);
    assert.equal(isNotFound(error(404, 'invalid_response')), false);
    assert.equal(isNotFound(error(500, 'not_found')), false);
    assert.equal(isNotFound(new Error('not_found')), false);
  });

  it('recognises rate limiting and bad tokens by status or code', () => {
    assert.equal(isRateLimited(error(429, 'whatever')), true);
    assert.equal(isRateLimited(error(403, 'rate_limit_exceeded')), true);
    assert.equal(isRateLimited(error(503, 'unavailable')), false);
    assert.equal(isUnauthorized(error(401, 'unauthorized')), true);
    assert.equal(isUnauthorized(error(403, 'forbidden')), false);
  });

  it('serialises its classification fields and keeps the cause out of JSON', () => {
    const wrapped = new HcloudError({
      status: 503,
      code: 'unavailable',
      message: 'm',
      endpoint: '/servers',
      cause: new Error('inner'),
    });
    assert.deepEqual(JSON.parse(JSON.stringify(wrapped)), {
      name: 'HcloudError',
      status: 503,
      code: 'unavailable',
      details: null,
      endpoint: '/servers',
    });
    assert.equal((wrapped.cause as Error).message, 'inner');
  });
});
