/**
 * Sustained Mailgun failures (401, 429) against the controller process, a real API server and Cluster
 * API's own core manager: the attempts stay apart however often the objects' status is rewritten.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CAPI_WAIT, controllerEnv, controllerSuite, mailsFor } from './controller-suite.test-support.ts';

const suite = controllerSuite();

// Each test has a namespace, Mailgun peer, Cluster API manager and controller of its own, and most of its
// time is waiting: they run side by side.
describe('sustained Mailgun failures: held apart, not retried in a loop', { concurrency: true }, () => {
  // Every failed send writes status; were its watch event (or Cluster API mirroring it into the
  // Cluster's status) not filtered out, it would reconcile the object again at once and hammer
  // Mailgun past the queue's backoff. Upper bounds only: a slow machine makes fewer attempts, never more.
  const windowMs = 3000;

  it('401: one attempt per MAILGUN_UNAUTHORIZED_RETRY_DELAY', async () => {
    const { objects, peer, namespace } = await suite.setup('mailgun-401-loop');
    const controller = await suite.run(controllerEnv(peer, namespace.name));
    peer.setApiKey('key-rotated');
    await objects.createPair('locked-out');
    const attempts = () => controller.output().split('retrying slowly').length - 1;
    await eventually(() => {
      assert.ok(attempts() >= 1);
    }, CAPI_WAIT);
    const first = attempts();
    await sleep(windowMs);
    // 1 s apart: at most 3 more in 3 s, plus one for timer jitter.
    assert.ok(attempts() - first <= 4, `${attempts() - first} attempts in ${windowMs} ms`);
  });

  it('429: exponentially further apart, however often the Cluster status is rewritten', async () => {
    const { objects, peer, namespace } = await suite.setup('mailgun-429-loop');
    await suite.run(controllerEnv(peer, namespace.name));
    peer.injectFaults(...Array.from({ length: 100 }, () => ({ status: 429 })));
    await objects.createPair('rate-limited');
    await eventually(() => {
      assert.ok(peer.messageRequests() >= 1);
    }, CAPI_WAIT);
    const first = peer.messageRequests();
    // Cluster API rewrites the Cluster's status after each status change of the MailgunCluster (its
    // InfrastructureReady mirrors our Ready); another writer of that status adds a rewrite every 200 ms.
    const rewrites = 15;
    for (let i = 0; i < rewrites; i++) {
      await objects.applyClusterCondition('rate-limited', {
        type: 'LoopwrightTestRewrite',
        status: 'True',
        reason: 'Rewritten',
        message: `rewrite ${i}`,
      });
      await sleep(windowMs / rewrites);
    }
    // 1 s, 2 s, 4 s ...: at most 2 more in 3 s, plus one for timer jitter.
    assert.ok(
      peer.messageRequests() - first <= 3,
      `${peer.messageRequests() - first} requests in ${windowMs} ms`,
    );
    assert.equal(await mailsFor(peer, 'rate-limited'), 0);
  });
});
