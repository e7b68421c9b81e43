/**
 * The API key read from a Secret volume (MAILGUN_API_KEY_FILE) by the controller process: a key the
 * kubelet replaces is used at the next attempt. Against a real API server, Cluster API's own core manager
 * and a Mailgun peer.
 */
import { eventually, writeSecretVolume } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  API_KEY,
  CAPI_WAIT,
  controllerEnv,
  controllerSuite,
  expectExactlyOneMail,
} from './controller-suite.test-support.ts';

const suite = controllerSuite();

describe('the API key from a Secret volume', () => {
  it('a corrected key is used at the next attempt, without a restart', async (t) => {
    const { objects, peer, namespace } = await suite.setup('mailgun-key-file');
    const volume = mkdtempSync(join(tmpdir(), 'mailgun-key-'));
    t.after(() => {
      rmSync(volume, { recursive: true, force: true });
    });
    const keyFile = writeSecretVolume(volume, { 'api-key': 'key-revoked-0000' })['api-key'] ?? '';
    const controller = await suite.run(
      controllerEnv(peer, namespace.name, { MAILGUN_API_KEY: '', MAILGUN_API_KEY_FILE: keyFile }),
    );
    await objects.createPair('key-file');
    await eventually(async () => {
      const conditions = (await objects.getMailgunCluster('key-file')).status?.conditions ?? [];
      assert.equal(conditions.find((c) => c.type === 'RequestSent')?.reason, 'Unauthorized');
    }, CAPI_WAIT);
    // What the kubelet does when the Secret is corrected: a new directory behind `..data`.
    writeSecretVolume(volume, { 'api-key': API_KEY });
    await expectExactlyOneMail(peer, objects, 'key-file');
    assert.match(controller.output(), /secret file changed: using its new value/);
  });
});
