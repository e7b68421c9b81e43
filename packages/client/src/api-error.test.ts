import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, KubeApiFailure, toKubeApiError } from './api-error.ts';

const request = { method: 'PATCH', path: '/apis/example.com/v1/namespaces/ns/ats/x/status' };

function status(code: number, reason: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, ...extra });
}

describe('KubeApiError.fromResponse', () => {
  it('keeps the Status: code, reason, message, details, and the request', () => {
    const error = KubeApiError.fromResponse(
      422,
      status(422, 'Invalid', {
        message: 'At.example.com "x" is invalid: spec.schedule: Invalid value',
        details: { name: 'x', kind: 'At', causes: [{ field: 'spec.schedule', reason: 'FieldValueInvalid' }] },
      }),
      undefined,
      request,
    );
    assert.equal(error.failure, KubeApiFailure.Status);
    assert.equal(error.status, 422);
    assert.equal(error.reason, 'Invalid');
    assert.equal(error.statusMessage, 'At.example.com "x" is invalid: spec.schedule: Invalid value');
    assert.equal(error.details?.causes?.[0]?.field, 'spec.schedule');
    assert.equal(error.message, 'At.example.com "x" is invalid: spec.schedule: Invalid value (Invalid, 422)');
    assert.deepEqual([error.method, error.path], [request.method, request.path]);
  });

  it("takes the code from the Status when it has one (the server's word over a proxy's)", () => {
    assert.equal(KubeApiError.fromResponse(500, status(404, 'NotFound'), undefined, request).status, 404);
  });

  it('names the request and keeps the HTTP status when the body is not a Status', () => {
    const error = KubeApiError.fromResponse(503, 'upstream connect error', undefined, request);
    assert.equal(error.status, 503);
    assert.equal(error.reason, '');
    assert.equal(error.statusMessage, undefined);
    assert.equal(error.message, `PATCH ${request.path}: HTTP 503: upstream connect error`);
    const echoed = KubeApiError.fromResponse(502, '{"kind":"ConfigMap"}', undefined, request);
    assert.equal(echoed.reason, '', 'JSON that is not a Status has no reason');
    assert.equal(
      KubeApiError.fromResponse(401, '', undefined, request).message,
      `PATCH ${request.path}: HTTP 401`,
    );
  });

  it('cuts a long non-Status body short in the message', () => {
    const error = KubeApiError.fromResponse(502, 'x'.repeat(1000), undefined, request);
    assert.ok(error.message.endsWith(`${'x'.repeat(200)}...`));
    assert.ok(error.message.length < 300);
  });

  it('retryAfterMs: Status.details.retryAfterSeconds first, else the Retry-After header, in milliseconds', () => {
    const both = status(429, 'TooManyRequests', { details: { retryAfterSeconds: 7 } });
    assert.equal(KubeApiError.fromResponse(429, both, '3', request).retryAfterMs, 7000);
    assert.equal(
      KubeApiError.fromResponse(429, status(429, 'TooManyRequests'), '3', request).retryAfterMs,
      3000,
    );
    assert.equal(KubeApiError.fromResponse(503, 'busy', ' 2 ', request).retryAfterMs, 2000);
    assert.equal(
      KubeApiError.fromResponse(404, status(404, 'NotFound'), undefined, request).retryAfterMs,
      undefined,
    );
    assert.equal(
      KubeApiError.fromResponse(429, 'slow down', 'Wed, 21 Oct 2015 07:28:00 GMT', request).retryAfterMs,
      undefined,
      'an HTTP date is not a hint the API server sends',
    );
    assert.equal(KubeApiError.fromResponse(429, 'slow down', '0', request).retryAfterMs, undefined);
  });
});

describe('KubeApiError.fromStatus (watch ERROR events)', () => {
  it('uses Status.code, or 500 when the event has none', () => {
    const gone = KubeApiError.fromStatus({
      kind: 'Status',
      code: 410,
      reason: 'Expired',
      message: 'too old',
    });
    assert.deepEqual([gone.status, gone.reason, gone.message], [410, 'Expired', 'too old (Expired, 410)']);
    const bare = KubeApiError.fromStatus({ kind: 'Status' });
    assert.deepEqual([bare.status, bare.reason, bare.message], [500, '', 'HTTP 500']);
  });
});

describe('KubeApiError.noResponse', () => {
  it('a socket error is a network failure that names the request and keeps the cause', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const error = KubeApiError.noResponse(reset, { method: 'GET', path: '/api/v1/pods' }, false);
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.equal(error.status, undefined);
    assert.equal(error.cause, reset);
    assert.equal(error.message, 'GET /api/v1/pods: ECONNRESET read ECONNRESET');
  });

  it('a TimeoutError is a timeout whoever raised it; any other abort reason is an abort', () => {
    const timeout = new DOMException('deadline passed', 'TimeoutError');
    assert.equal(KubeApiError.noResponse(timeout, request, true).failure, KubeApiFailure.Timeout);
    assert.equal(KubeApiError.noResponse(timeout, request, false).failure, KubeApiFailure.Timeout);
    const abort = new DOMException('stopped', 'AbortError');
    assert.equal(KubeApiError.noResponse(abort, request, true).failure, KubeApiFailure.Aborted);
  });
});

describe('KubeApiError constructor', () => {
  it('is a status failure when given a status, a network failure otherwise', () => {
    assert.equal(
      new KubeApiError('conflict', { status: 409, reason: 'Conflict' }).failure,
      KubeApiFailure.Status,
    );
    assert.equal(new KubeApiError('reset').failure, KubeApiFailure.Network);
  });
});

describe('toKubeApiError', () => {
  it('finds the error anywhere in a cause chain, and nothing in other errors', () => {
    const inner = new KubeApiError('conflict', { status: 409, reason: 'Conflict' });
    assert.equal(toKubeApiError(new Error('outer', { cause: new Error('middle', { cause: inner }) })), inner);
    assert.equal(toKubeApiError(new Error('plain')), undefined);
    assert.equal(toKubeApiError({ status: 409, reason: 'Conflict' }), undefined);
  });
});

describe('KubeApiError.fromResponse: bodies that are not quite a Status', () => {
  it('without a request line, the message starts with the HTTP status', () => {
    assert.equal(KubeApiError.fromResponse(503, 'busy', undefined).message, 'HTTP 503: busy');
    assert.equal(KubeApiError.fromResponse(401, '', undefined).message, 'HTTP 401');
    assert.equal(
      KubeApiError.fromResponse(404, status(404, 'NotFound'), undefined).message,
      'HTTP 404 NotFound',
    );
  });

  it('a Status without a message names the request, its code and reason', () => {
    assert.equal(
      KubeApiError.fromResponse(404, status(404, 'NotFound', { message: '' }), undefined, request).message,
      `PATCH ${request.path}: HTTP 404 NotFound`,
    );
  });

  it('a Status is recognised by its kind or by a reason; other JSON is passed on as text', () => {
    const kindOnly = KubeApiError.fromResponse(404, '{"kind":"Status","message":"gone"}', undefined, request);
    assert.deepEqual(
      [kindOnly.status, kindOnly.reason, kindOnly.message],
      [404, '', 'gone (no reason, 404)'],
    );
    const reasonOnly = KubeApiError.fromResponse(409, '{"reason":"Conflict","message":"stale"}', undefined);
    assert.deepEqual([reasonOnly.reason, reasonOnly.message], ['Conflict', 'stale (Conflict, 409)']);
    for (const body of ['null', '42', '"Status"', '[]']) {
      const error = KubeApiError.fromResponse(502, body, undefined);
      assert.deepEqual([error.reason, error.message], ['', `HTTP 502: ${body}`], body);
    }
  });

  it('a code that is not a positive number, a reason or message that is not a string, are not used', () => {
    for (const code of [0, -1, '404']) {
      assert.equal(
        KubeApiError.fromResponse(503, status(0, 'X', { code }), undefined).status,
        503,
        String(code),
      );
    }
    const odd = KubeApiError.fromResponse(
      500,
      JSON.stringify({ kind: 'Status', reason: 42, message: 7 }),
      undefined,
    );
    assert.deepEqual([odd.reason, odd.statusMessage, odd.message], ['', undefined, 'HTTP 500']);
  });

  it('keeps a body of 200 characters whole', () => {
    const body = 'y'.repeat(200);
    assert.equal(KubeApiError.fromResponse(502, body, undefined).message, `HTTP 502: ${body}`);
  });

  it('ignores a retry hint that is not a positive whole number of seconds', () => {
    const hint = (retryAfterSeconds: unknown, header?: string) =>
      KubeApiError.fromResponse(
        429,
        status(429, 'TooManyRequests', { details: { retryAfterSeconds } }),
        header,
      ).retryAfterMs;
    assert.equal(hint(0, '3'), 3000, 'no hint in the details: the header counts');
    assert.equal(hint('5', '3'), 3000);
    assert.equal(JSON.parse('1e400'), Infinity);
    assert.equal(
      KubeApiError.fromResponse(
        429,
        '{"reason":"TooManyRequests","details":{"retryAfterSeconds":1e400}}',
        '3',
      ).retryAfterMs,
      3000,
    );
    for (const header of ['3s', 'x3', '1.5', '-2', ''])
      assert.equal(hint(undefined, header), undefined, header);
    assert.equal(hint(undefined, '12'), 12_000);
  });
});

describe('KubeApiError.fromStatus: defaults', () => {
  it('a watch ERROR event without a code takes the HTTP status when there is one, else 500', () => {
    assert.equal(KubeApiError.fromStatus({ reason: 'Expired' }, { httpStatus: 410 }).status, 410);
    assert.equal(KubeApiError.fromStatus({ reason: 'Expired' }).status, 500);
  });
});

describe('KubeApiError.noResponse and undecodable: any cause', () => {
  it('says what the cause is when it is not an Error, or has no string code', () => {
    assert.equal(
      KubeApiError.noResponse('socket hang up', request, false).message,
      `PATCH ${request.path}: socket hang up`,
    );
    assert.equal(
      KubeApiError.noResponse(undefined, request, false).message,
      `PATCH ${request.path}: undefined`,
    );
    const numbered = Object.assign(new Error('odd'), { code: 42 });
    assert.equal(KubeApiError.noResponse(numbered, request, false).message, `PATCH ${request.path}: odd`);
  });

  it('only an Error named TimeoutError is a timeout', () => {
    const lookalike = { name: 'TimeoutError', message: 'not an Error' };
    assert.equal(KubeApiError.noResponse(lookalike, request, false).failure, KubeApiFailure.Network);
  });

  it('an undecodable response keeps its HTTP status and the decoder error', () => {
    const cause = new SyntaxError('Unexpected token < in JSON');
    const error = KubeApiError.undecodable(200, cause, request);
    assert.deepEqual(
      [error.failure, error.status, error.reason, error.cause, error.method, error.path, error.message],
      [
        KubeApiFailure.Decode,
        200,
        '',
        cause,
        'PATCH',
        request.path,
        `PATCH ${request.path}: undecodable response: Unexpected token < in JSON`,
      ],
    );
    assert.equal(
      KubeApiError.undecodable(200, 'truncated', request).message,
      `PATCH ${request.path}: undecodable response: truncated`,
    );
  });

  it('is named KubeApiError, and one without a cause has no cause property', () => {
    assert.equal(new KubeApiError('conflict').name, 'KubeApiError');
    assert.equal('cause' in new KubeApiError('conflict', { status: 409 }), false);
  });
});

describe('toKubeApiError: how deep it looks', () => {
  function wrapped(error: Error, times: number): Error {
    let outer = error;
    for (let i = 0; i < times; i++) outer = new Error(`wrap ${i}`, { cause: outer });
    return outer;
  }

  it('looks through up to 15 wrappers, and ends on a cause cycle', () => {
    const inner = new KubeApiError('gone', { status: 410, reason: 'Gone' });
    assert.equal(toKubeApiError(wrapped(inner, 15)), inner);
    assert.equal(toKubeApiError(wrapped(inner, 16)), undefined);
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    assert.equal(toKubeApiError(a), undefined);
  });
});
