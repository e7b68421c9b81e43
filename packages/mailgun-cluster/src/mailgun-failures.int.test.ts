/**
 * Every Mailgun failure class the controller process meets, against a real API server, Cluster API's own
 * core manager and a Mailgun peer that injects the faults: how each is reported (condition, Event, never
 * the credentials) and retried, with exactly one mail in the end.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  API_KEY,
  CAPI_WAIT,
  controllerEnv,
  controllerSuite,
  expectExactlyOneMail,
  isAbout,
  itRetries,
  type Context,
} from './controller-suite.test-support.ts';

const suite = controllerSuite();

describe('Mailgun failures', () => {
  let ctx: Context;
  before(async () => {
    ctx = await suite.setup('mailgun-errors');
    await suite.run(controllerEnv(ctx.peer, ctx.namespace.name));
  });

  async function requestSent(name: string) {
    const conditions = (await ctx.objects.getMailgunCluster(name)).status?.conditions;
    return conditions?.find((c) => c.type === 'RequestSent');
  }
  async function warningReasons(name: string): Promise<string[]> {
    return (await suite.events(ctx.namespace.name))
      .filter((e) => isAbout(e, name) && e.type === 'Warning')
      .map((e) => e.reason);
  }
  it('4xx: Rejected condition and a Warning Event, no retry until the spec changes', async () => {
    const { objects, peer } = ctx;
    const before = peer.messageRequests();
    peer.injectFaults({ status: 400, body: { message: "'from' parameter is not a valid address" } });
    await objects.createPair('rejected');
    await eventually(async () => {
      const condition = await requestSent('rejected');
      assert.equal(condition?.reason, 'Rejected');
      assert.match(condition.message ?? '', /not a valid address/);
      assert.deepEqual(await warningReasons('rejected'), ['Rejected']);
    }, CAPI_WAIT);
    await sleep(1500);
    assert.equal(peer.messageRequests() - before, 1, 'not retried');
    await objects.patch('mailgunclusters', 'rejected', { spec: { request: 'a corrected request' } });
    await expectExactlyOneMail(peer, objects, 'rejected');
  });

  it('4xx echoing the credentials: neither the condition nor the Event carries them', async () => {
    const { objects, peer } = ctx;
    const basic = Buffer.from(`api:${API_KEY}`).toString('base64');
    // Not registered anywhere: only its shape gives it away.
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl';
    const leaks = [basic, API_KEY, jwt];
    peer.injectFaults({
      status: 400,
      body: { message: `invalid request; got Authorization: Basic ${basic} (key ${API_KEY}, Bearer ${jwt})` },
    });
    await objects.createPair('echoed');
    await eventually(async () => {
      const conditions = (await objects.getMailgunCluster('echoed')).status?.conditions ?? [];
      const requestSent = conditions.find((c) => c.type === 'RequestSent');
      assert.equal(requestSent?.reason, 'Rejected');
      assert.match(requestSent.message ?? '', /Authorization: Basic \[REDACTED\]/);
      const notes = (await suite.events(ctx.namespace.name))
        .filter((e) => isAbout(e, 'echoed'))
        .map((e) => e.note ?? '');
      assert.equal(notes.length, 1);
      assert.match(notes[0] ?? '', /Authorization: Basic \[REDACTED\]/);
      for (const leak of leaks) {
        assert.equal(JSON.stringify(conditions).includes(leak), false, `status carries ${leak}`);
        assert.equal(notes[0]?.includes(leak), false, `Event carries ${leak}`);
      }
    }, CAPI_WAIT);
  });

  it('401: Unauthorized condition and Event, retried slowly until the key works', async () => {
    const { objects, peer } = ctx;
    peer.setApiKey('key-rotated');
    await objects.createPair('unauthorized');
    await eventually(async () => {
      assert.equal((await requestSent('unauthorized'))?.reason, 'Unauthorized');
      assert.ok((await warningReasons('unauthorized')).includes('Unauthorized'));
    }, CAPI_WAIT);
    peer.setApiKey(API_KEY);
    await expectExactlyOneMail(peer, objects, 'unauthorized');
  });

  it('404 (a domain the account lacks): Misconfigured condition and Event, retried slowly, never taken for a refused mail', async () => {
    const { objects, peer } = ctx;
    const before = peer.messageRequests();
    peer.injectFaults({ status: 404, body: { message: 'Domain not found: mg.example.com' } });
    await objects.createPair('misconfigured');
    await eventually(async () => {
      const condition = await requestSent('misconfigured');
      assert.equal(condition?.reason, 'Misconfigured');
      assert.match(condition.message ?? '', /Domain not found/);
      assert.ok((await warningReasons('misconfigured')).includes('Misconfigured'));
    }, CAPI_WAIT);
    // The fault was one answer: the retry after MAILGUN_UNAUTHORIZED_RETRY_DELAY sends, with no spec change.
    await expectExactlyOneMail(peer, objects, 'misconfigured');
    assert.equal(peer.messageRequests() - before, 2);
  });

  // [name, fault, messages requests: a second send only when the first provably or settledly failed]
  const retryable = [
    ['429', { status: 429 }, 2],
    ['500 before acceptance', { status: 500 }, 2],
    ['503 after the mail was accepted', { status: 503, afterAccept: true }, 1],
  ] as const;
  for (const [what, fault, requests] of retryable) itRetries(() => ctx, what, fault, requests);
});
