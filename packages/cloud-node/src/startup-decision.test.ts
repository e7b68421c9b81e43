import { HcloudError } from '@loopwright/hcloud';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyStartupFailure, type StartupFailure } from './startup-decision.ts';

const api = (status: number | undefined, code: string): HcloudError =>
  new HcloudError({ status, code, message: `${status ?? '-'} ${code}` });

describe('classifyStartupFailure', () => {
  const cases: [string, unknown, StartupFailure][] = [
    ['connection refused or reset', api(undefined, 'network_error'), 'transient'],
    ['no answer within the timeout', api(undefined, 'timeout'), 'transient'],
    ['503 unavailable', api(503, 'unavailable'), 'transient'],
    ['500 server_error', api(500, 'server_error'), 'transient'],
    ['a gateway 502 without JSON', api(502, 'invalid_response'), 'transient'],
    ['a 200 whose body is not JSON', api(200, 'invalid_response'), 'transient'],
    ['504 with an unknown code', api(504, 'gateway_timeout'), 'transient'],
    ['429: the budget refills', api(429, 'rate_limit_exceeded'), 'transient'],
    ['401: the token read at start stays wrong', api(401, 'unauthorized'), 'token-rejected'],
    ['unauthorized code without a status', api(undefined, 'unauthorized'), 'token-rejected'],
    ['403 forbidden', api(403, 'forbidden'), 'request-rejected'],
    ['a bare 404: HCLOUD_ENDPOINT points elsewhere', api(404, 'not_found'), 'request-rejected'],
    ['a 404 HTML page: HCLOUD_ENDPOINT is no API', api(404, 'invalid_response'), 'request-rejected'],
    ['400 invalid_input', api(400, 'invalid_input'), 'request-rejected'],
    ['an abort nobody asked for', api(undefined, 'aborted'), 'unexpected'],
    ['not an API error: a bug', new TypeError('x is undefined'), 'unexpected'],
  ];
  for (const [name, error, expected] of cases)
    it(`${name}: ${expected}`, () => {
      assert.equal(classifyStartupFailure(error), expected);
    });
});
