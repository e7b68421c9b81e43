import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, KubeApiFailure } from '@loopwright/client';
import { FailureReason, failureReason } from './failure-reason.ts';

const request = { method: 'GET', path: '/api/v1/configmaps' };
const response = (code: number, body = '') => KubeApiError.fromResponse(code, body, undefined, request);

describe('failureReason', () => {
  it('classifies error statuses for the metric', () => {
    const reasons = [401, 403, 404, 410, 429, 500, 503, 400].map((code) =>
      failureReason(response(code), 'list'),
    );
    assert.deepEqual(reasons, [
      FailureReason.Unauthorized,
      FailureReason.Forbidden,
      FailureReason.NotFound,
      FailureReason.Gone,
      FailureReason.Throttled,
      FailureReason.ServerError,
      FailureReason.ServerError,
      FailureReason.HttpError,
    ]);
    assert.equal(
      failureReason(KubeApiError.fromStatus({ code: 410, reason: 'Expired' }), 'watch'),
      FailureReason.Gone,
      'an ERROR event of an expired watch',
    );
  });

  it('classifies a missing resource by Status reason NotFound, or by 404 without a reason', () => {
    const notFound = JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound' });
    assert.equal(failureReason(response(404, notFound), 'list'), FailureReason.NotFound);
    assert.equal(failureReason(response(404, '404 page not found'), 'list'), FailureReason.NotFound);
    // The reason decides, never the message text.
    const notFoundInMessage = JSON.stringify({
      kind: 'Status',
      code: 500,
      reason: 'InternalError',
      message: 'resource not found',
    });
    assert.equal(failureReason(response(500, notFoundInMessage), 'list'), FailureReason.ServerError);
  });

  it('classifies failures without a response by kind; a timed-out watch is an inactive one', () => {
    const reset = KubeApiError.noResponse(new Error('socket hang up'), request, false);
    assert.equal(failureReason(reset, 'watch'), FailureReason.Network);
    const timeout = KubeApiError.noResponse(new DOMException('late', 'TimeoutError'), request, false);
    assert.equal(timeout.failure, KubeApiFailure.Timeout);
    assert.equal(failureReason(timeout, 'list'), FailureReason.Timeout);
    assert.equal(failureReason(timeout, 'watch'), FailureReason.Inactivity);
    const garbage = KubeApiError.undecodable(200, new SyntaxError('Unexpected token'), request);
    assert.equal(failureReason(garbage, 'list'), FailureReason.Decode);
  });

  it('anything that is not a KubeApiError is a bug', () => {
    assert.equal(failureReason(new TypeError('x is undefined'), 'list'), FailureReason.Internal);
    assert.equal(failureReason('thrown string', 'watch'), FailureReason.Internal);
  });
});
