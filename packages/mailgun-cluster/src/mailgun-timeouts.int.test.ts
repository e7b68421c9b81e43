/**
 * Mailgun timeouts (MAILGUN_TIMEOUT), before and after Mailgun accepted the mail, against the controller
 * process, a real API server and Cluster API's own core manager: retried, still exactly one mail.
 */
import { before, describe } from 'node:test';
import { controllerEnv, controllerSuite, itRetries, type Context } from './controller-suite.test-support.ts';

const suite = controllerSuite();

describe('Mailgun timeouts', () => {
  let ctx: Context;
  before(async () => {
    ctx = await suite.setup('mailgun-timeouts');
    await suite.run(
      controllerEnv(ctx.peer, ctx.namespace.name, {
        MAILGUN_TIMEOUT: '1s',
        MAILGUN_EVENTS_SETTLE_TIME: '3s',
      }),
    );
  });
  const timeouts = [
    ['timeout after the mail was accepted', { hang: true as const, afterAccept: true }, 1],
    ['timeout before acceptance', { hang: true as const }, 2],
  ] as const;
  for (const [what, fault, requests] of timeouts) itRetries(() => ctx, what, fault, requests);
});
