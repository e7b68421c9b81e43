import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MailgunError, type FailureKind } from './mailgun.ts';
import { ConditionType, PausedReason, ReadyReason, RequestSentReason } from './reasons.ts';
import type { RequestStatus } from './resource.ts';
import {
  acceptedCondition,
  confirmingDeliveryCondition,
  failureCondition,
  pausedCondition,
  requestConditions,
  sendingCondition,
  statusPatch,
  type Observed,
} from './status.ts';

const t0 = new Date('2026-11-22T10:00:00Z');
const t1 = new Date('2026-11-22T10:05:00Z');
const observed: Observed = { generation: 3, fulfilled: false };
const attempt = { id: 'a1', startedAt: t0.toISOString() };

/** The status a first write of `conditions` (and fields) leaves on the server. */
function written(
  status: RequestStatus | undefined,
  change: Parameters<typeof statusPatch>[1],
): RequestStatus {
  const patch = statusPatch(status, change, observed, t0);
  assert.ok(patch);
  return { ...status, ...patch } as RequestStatus;
}

describe('statusPatch', () => {
  it('writes nothing when the conditions and the contract fields would not change', () => {
    const change = { conditions: requestConditions(sendingCondition(attempt, observed), observed) };
    const status = written(undefined, change);
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.lastTransitionTime]),
      [
        [ConditionType.Paused, 'False', '2026-11-22T10:00:00Z'],
        [ConditionType.RequestSent, 'Unknown', '2026-11-22T10:00:00Z'],
        [ConditionType.Ready, 'False', '2026-11-22T10:00:00Z'],
      ],
    );
    assert.equal(statusPatch(status, change, observed, t1), undefined);
    // A new generation is news: observedGeneration and every condition's observedGeneration move.
    const next = { ...observed, generation: 4 };
    assert.equal(statusPatch(status, change, next, t1)?.observedGeneration, 4);
  });

  it('always writes fields (a claim, a recorded id, a released attempt), even with nothing else new', () => {
    const change = { conditions: requestConditions(sendingCondition(attempt, observed), observed) };
    const status = written(undefined, change);
    assert.deepEqual(
      statusPatch(status, { ...change, fields: { sendAttempt: null } }, observed, t1).sendAttempt,
      null,
    );
  });

  it('reports the Cluster API contract: provisioned only with an accepted mail and a fulfilled spec', () => {
    const accepted = (fulfilled: boolean) =>
      statusPatch(
        undefined,
        {
          conditions: requestConditions(
            acceptedCondition('<m1>', observed),
            { ...observed, fulfilled },
            '<m1>',
          ),
          fields: { messageID: '<m1>' },
        },
        { ...observed, fulfilled },
        t0,
      );
    assert.deepEqual(accepted(false).initialization, { provisioned: false });
    assert.deepEqual(accepted(true).initialization, { provisioned: true });
    assert.equal(accepted(true).observedGeneration, 3);
    // Fulfilled without a mail (someone filled in the spec early): not provisioned.
    const unsent = statusPatch(
      undefined,
      { conditions: requestConditions(sendingCondition(attempt, observed), observed) },
      { ...observed, fulfilled: true },
      t0,
    );
    assert.deepEqual(unsent?.initialization, { provisioned: false });
    // An id already in status counts too.
    const recorded = statusPatch(
      { messageID: '<m1>' },
      { conditions: requestConditions(acceptedCondition('<m1>', observed), observed, '<m1>') },
      { ...observed, fulfilled: true },
      t0,
    );
    assert.deepEqual(recorded?.initialization, { provisioned: true });
  });

  it('paused: writes the Paused condition alone, never the contract fields', () => {
    const running = written(undefined, {
      conditions: requestConditions(
        acceptedCondition('<m1>', observed),
        { ...observed, fulfilled: true },
        '<m1>',
      ),
      fields: { messageID: '<m1>' },
    });
    const patch = statusPatch(
      running,
      { conditions: [pausedCondition(observed)], paused: true },
      observed,
      t1,
    );
    assert.ok(patch);
    assert.deepEqual(Object.keys(patch), ['conditions']);
    assert.equal(patch.conditions.find((c) => c.type === ConditionType.Paused)?.status, 'True');
    const paused = { ...running, ...patch } as RequestStatus;
    assert.equal(
      statusPatch(paused, { conditions: [pausedCondition(observed)], paused: true }, observed, t1),
      undefined,
    );
  });

  it('a status written without the contract fields (an older version) gets them, conditions unchanged', () => {
    const change = { conditions: requestConditions(sendingCondition(attempt, observed), observed) };
    const { conditions, observedGeneration } = written(undefined, change);
    assert.deepEqual(statusPatch({ conditions, observedGeneration }, change, observed, t1)?.initialization, {
      provisioned: false,
    });
    // Once written, the same outcome writes nothing.
    assert.equal(
      statusPatch(
        { conditions, observedGeneration, initialization: { provisioned: false } },
        change,
        observed,
        t1,
      ),
      undefined,
    );
  });

  it('fills in the message of stored conditions written without one, also of those the change leaves alone', () => {
    const change = { conditions: requestConditions(sendingCondition(attempt, observed), observed) };
    const status = written(undefined, change);
    const withoutMessages: RequestStatus = {
      ...status,
      conditions: status.conditions?.map(({ type, status, reason, lastTransitionTime }) => ({
        type,
        status,
        reason,
        lastTransitionTime,
      })),
    };
    const patch = statusPatch(withoutMessages, change, observed, t1);
    assert.ok(patch);
    assert.ok(patch.conditions.every((condition) => typeof condition.message === 'string'));
    const paused = statusPatch(
      withoutMessages,
      { conditions: [pausedCondition(observed)], paused: true },
      observed,
      t1,
    );
    assert.deepEqual(
      paused?.conditions.map((c) => [c.type, c.message]),
      [
        [ConditionType.Paused, 'Cluster.spec.paused or the cluster.x-k8s.io/paused annotation is set'],
        [ConditionType.RequestSent, ''],
        [ConditionType.Ready, ''],
      ],
    );
  });
});

describe('conditions', () => {
  it('their messages name what a user looks for: the attempt, the message id, the key', () => {
    assert.equal(sendingCondition(attempt, observed).message, 'sending the request mail (attempt a1)');
    assert.equal(acceptedCondition('<m1>', observed).message, 'Mailgun accepted the request mail <m1>');
    assert.equal(
      confirmingDeliveryCondition(attempt, observed).message,
      "attempt a1 has no recorded message id; checking Mailgun's events before resending",
    );
    assert.match(
      failureCondition(
        new MailgunError('401', { kind: 'unauthorized', maybeSent: false, statusCode: 401 }),
        observed,
      ).message ?? '',
      /check the API key/,
    );
  });

  it('Ready repeats why not until a mail is accepted, then waits for fulfilment, then is True', () => {
    const [paused, sending, ready] = requestConditions(sendingCondition(attempt, observed), observed);
    assert.deepEqual(paused, {
      type: ConditionType.Paused,
      status: 'False',
      reason: PausedReason.NotPaused,
      observedGeneration: 3,
    });
    assert.deepEqual(ready, {
      type: ConditionType.Ready,
      status: 'False',
      reason: RequestSentReason.Sending,
      message: sending?.message,
      observedGeneration: 3,
    });
    const [, , waiting] = requestConditions(acceptedCondition('<m1>', observed), observed, '<m1>');
    assert.equal(waiting?.reason, ReadyReason.WaitingForFulfilment);
    assert.equal(waiting.status, 'False');
    assert.match(waiting.message ?? '', /<m1> accepted/);
    const [, , provisioned] = requestConditions(
      acceptedCondition('<m1>', observed),
      { ...observed, fulfilled: true },
      '<m1>',
    );
    assert.deepEqual(provisioned, {
      type: ConditionType.Ready,
      status: 'True',
      reason: ReadyReason.Provisioned,
      observedGeneration: 3,
    });
  });

  it('RequestSent after a failure: what happened and whether the mail may be out', () => {
    const failure = (kind: FailureKind, maybeSent: boolean, statusCode?: number) =>
      failureCondition(new MailgunError(`answer ${statusCode}`, { kind, maybeSent, statusCode }), observed);
    assert.deepEqual(failure('rejected', false, 400), {
      type: ConditionType.RequestSent,
      status: 'False',
      reason: RequestSentReason.Rejected,
      message: 'answer 400',
      observedGeneration: 3,
    });
    assert.equal(failure('unauthorized', false, 401).reason, RequestSentReason.Unauthorized);
    assert.deepEqual(failure('misconfigured', false, 404), {
      type: ConditionType.RequestSent,
      status: 'False',
      reason: RequestSentReason.Misconfigured,
      message:
        'answer 404: check MAILGUN_DOMAIN, MAILGUN_URL and what the account may send; the mail itself was not refused',
      observedGeneration: 3,
    });
    assert.equal(failure('unauthorized', false, 401).status, 'False');
    assert.doesNotMatch(
      failure('unauthorized', false, 401).message ?? '',
      /answer 401/,
      'no echo of the answer',
    );
    assert.deepEqual(
      [failure('retryable', false, 429).status, failure('retryable', false, 429).reason],
      ['False', RequestSentReason.MailgunUnavailable],
    );
    const maybeSent = failure('retryable', true, 503);
    assert.deepEqual([maybeSent.status, maybeSent.reason], ['Unknown', RequestSentReason.ConfirmingDelivery]);
    assert.match(maybeSent.message ?? '', /^answer 503; the mail may have been accepted/);
  });
});
