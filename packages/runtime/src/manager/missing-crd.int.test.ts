import { ApiextensionsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { eventually, loadTestKubeConfig } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import winston from 'winston';
import { Controller } from '../controller/controller.ts';
import { Manager, type ManagerExit } from './manager.ts';

/** A winston logger whose entries the test reads back, as a pod's log would show them. */
function capturingLogger() {
  const entries: { level: string; message: string; [field: string]: unknown }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') entries.push(JSON.parse(line) as (typeof entries)[number]);
      }
      callback();
    },
  });
  const logger = winston.createLogger({
    level: 'debug',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream })],
  });
  return { logger, entries };
}

describe('Manager started before its CRD is installed', () => {
  let kc: KubeConfig;
  const group = `missing-${randomBytes(3).toString('hex')}.loopwright.test`;
  const crdName = `gadgets.${group}`;

  before(() => {
    kc = loadTestKubeConfig();
  });
  after(async () => {
    await kc
      .makeApiClient(ApiextensionsV1Api)
      .deleteCustomResourceDefinition({ name: crdName })
      .catch(() => undefined);
  });

  async function installCrd(): Promise<void> {
    const crds = kc.makeApiClient(ApiextensionsV1Api);
    await crds.createCustomResourceDefinition({
      body: {
        metadata: { name: crdName },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } },
            },
          ],
        },
      },
    });
  }

  it('says once that the CRD is missing, stays up and unready, and syncs once it is installed', async () => {
    const { logger, entries } = capturingLogger();
    const cacheSyncTimeoutMs = 500;
    const manager = new Manager({
      kubeConfig: kc,
      logger,
      health: { port: 0, host: '127.0.0.1' },
      cacheSyncTimeoutMs,
    });
    manager.add(
      new Controller({
        name: 'gadget',
        for: { group, version: 'v1', plural: 'gadgets', kind: 'Gadget' },
        reconcile: () => Promise.resolve(),
      }),
    );
    const abort = new AbortController();
    const outcome: { settled?: ManagerExit | Error } = {};
    const done = manager.start(abort.signal).then(
      (exit) => {
        outcome.settled = exit;
      },
      (error: unknown) => {
        outcome.settled = error as Error;
      },
    );
    const readyz = async (): Promise<number> =>
      (await fetch(`http://127.0.0.1:${String(manager.healthPort)}/readyz`)).status;
    const notInstalled = () => entries.filter((e) => e.message.includes(`CRD ${crdName} is not installed`));

    try {
      await eventually(() => {
        assert.equal(notInstalled().length, 1);
      });
      assert.match(notInstalled()[0]?.message ?? '', new RegExp(`${group}/v1, Resource=gadgets`));

      // Several cache-sync timeouts and list retries later: still running, unready, and quiet.
      await sleep(cacheSyncTimeoutMs * 6);
      assert.equal(outcome.settled, undefined, 'start neither resolved nor rejected');
      assert.notEqual(await readyz(), 200);
      assert.equal(notInstalled().length, 1, 'one line, not one per retry');
      assert.deepEqual(
        entries.filter((e) => e.level === 'warn' || e.level === 'error').map((e) => e.message),
        [notInstalled()[0]?.message],
        'nothing else warns',
      );

      await installCrd();
      // The list is retried with the informer's backoff (800 ms doubling, a few seconds by now).
      await eventually(
        async () => {
          assert.equal(await readyz(), 200);
        },
        { timeoutMs: 45_000, intervalMs: 200 },
      );
      assert.ok(entries.some((e) => e.message === 'caches synced'));
      assert.equal(notInstalled().length, 1);
    } finally {
      abort.abort();
      await done;
    }
    assert.equal(outcome.settled, 'stopped');
  });
});
