import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterRequestMail, messageFields } from './mail.ts';
import { classifyMailgunFailure } from './mailgun.ts';

/** What mailgun.js 14 rejects with (its MailgunAPIError fields). */
function apiError(status: number, message: string, details = ''): unknown {
  return { type: 'MailgunAPIError', status, message, details };
}

describe('classifyMailgunFailure', () => {
  const cases: [string, unknown, { kind: string; maybeSent: boolean }][] = [
    [
      '400 bad input',
      apiError(400, 'Bad Request', "'from' parameter is not a valid address"),
      { kind: 'rejected', maybeSent: false },
    ],
    [
      '404 unknown domain',
      apiError(404, 'Not Found', 'Domain not found: mg.example.com'),
      { kind: 'misconfigured', maybeSent: false },
    ],
    [
      '403 sandbox recipient not authorised',
      apiError(403, 'Forbidden', 'Domain mg.example.com is not allowed to send'),
      { kind: 'misconfigured', maybeSent: false },
    ],
    [
      '422 unprocessable input',
      apiError(422, 'Unprocessable Entity'),
      { kind: 'rejected', maybeSent: false },
    ],
    ['401', apiError(401, 'Unauthorized', 'Forbidden'), { kind: 'unauthorized', maybeSent: false }],
    ['429', apiError(429, 'Too Many Requests'), { kind: 'retryable', maybeSent: false }],
    ['500', apiError(500, 'Internal Server Error'), { kind: 'retryable', maybeSent: true }],
    ['503', apiError(503, 'Service Unavailable'), { kind: 'retryable', maybeSent: true }],
    // mailgun.js reports network failures as status 400 with the code as message: not bad input.
    [
      'ECONNREFUSED as 400',
      apiError(400, 'ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'),
      { kind: 'retryable', maybeSent: false },
    ],
    [
      'timeout (ECONNABORTED) as 400',
      apiError(400, 'ECONNABORTED', 'timeout of 30000ms exceeded'),
      { kind: 'retryable', maybeSent: true },
    ],
    [
      'ECONNRESET as 400',
      apiError(400, 'ECONNRESET', 'socket hang up'),
      { kind: 'retryable', maybeSent: true },
    ],
    [
      'DNS failure as 400',
      apiError(400, 'ENOTFOUND', 'getaddrinfo ENOTFOUND api.mailgun.net'),
      { kind: 'retryable', maybeSent: false },
    ],
  ];
  for (const [name, error, expected] of cases) {
    it(`${name} -> ${expected.kind}, maybeSent ${expected.maybeSent}`, () => {
      const classified = classifyMailgunFailure(error, 'sending');
      assert.equal(classified.kind, expected.kind);
      assert.equal(classified.maybeSent, expected.maybeSent);
      assert.equal(classified.cause, error);
    });
  }
});

describe('request mail', () => {
  it('has the tutorial subject and body and carries the markers', () => {
    const mail = clusterRequestMail({
      priority: 'ExtremelyUrgent',
      request: '3 nodes',
      requester: 'dev@example.com',
      clusterName: 'prod',
      recipient: 'ops@example.com',
      markers: { uid: 'u-1', attempt: 'a-1', object: 'MailgunCluster ns/prod' },
    });
    const fields = messageFields(mail);
    assert.equal(fields.subject, '[ExtremelyUrgent] New Cluster prod requested');
    assert.equal(fields.text, 'Hello! One cluster please.\n\n3 nodes\n');
    assert.equal(fields.from, 'dev@example.com');
    assert.equal(fields.to, 'ops@example.com');
    assert.equal(fields['v:loopwright-uid'], 'u-1');
    assert.equal(fields['v:loopwright-attempt'], 'a-1');
    assert.equal(fields['h:X-Loopwright-Uid'], 'u-1');
    assert.equal(fields['o:tag'], 'loopwright-mailgun-cluster');
  });
});
