/**
 * Exactly one mail per cluster across crashes: the controller SIGKILLs itself at each checkpoint of a
 * send (main.test-support.ts) and a new process takes over. Against a real API server, Cluster API's own
 * core manager and Mailgun's mock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  controllerEnv,
  controllerSuite,
  expectExactlyOneMail,
  mailsFor,
} from './controller-suite.test-support.ts';

const suite = controllerSuite();

describe('exactly one mail per cluster', () => {
  for (const point of ['before-send', 'after-send', 'after-status-patch'] as const) {
    it(`when the controller is SIGKILLed ${point.replace(/-/g, ' ')} and restarted`, async () => {
      const { objects, peer, namespace } = await suite.setup(`mailgun-crash-${point}`);
      const crashing = await suite.run(controllerEnv(peer, namespace.name), { crashAt: point });
      const name = `crash-${point}`;
      await objects.createPair(name);
      const exit = await crashing.exited;
      assert.equal(exit.signal, 'SIGKILL');
      assert.equal(await mailsFor(peer, name), point === 'before-send' ? 0 : 1);
      await suite.run(controllerEnv(peer, namespace.name));
      await expectExactlyOneMail(peer, objects, name);
    });
  }
});
