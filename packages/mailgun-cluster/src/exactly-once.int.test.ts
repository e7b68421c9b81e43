/**
 * Exactly one mail per cluster, however often and by how many it is reconciled: replicas racing without
 * leader election, and a restore from a backup that dropped status (crashes: crash-recovery.int.test.ts).
 * Against a real API server, Cluster API's own core manager and Mailgun's mock.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CAPI_WAIT,
  controllerEnv,
  controllerSuite,
  expectExactlyOneMail,
  mailsFor,
} from './controller-suite.test-support.ts';
import { condition } from './objects.test-support.ts';
import { MESSAGE_ID_ANNOTATION } from './resource.ts';

const suite = controllerSuite();

describe('exactly one mail per cluster', () => {
  it('with two replicas racing (no leader election) and many reconciles', async () => {
    const { objects, peer, namespace } = await suite.setup('mailgun-race');
    await suite.run(controllerEnv(peer, namespace.name, { WORKERS: '2' }));
    await suite.run(controllerEnv(peer, namespace.name, { WORKERS: '2' }));
    const names = ['race-a', 'race-b', 'race-c', 'race-d'];
    await Promise.all(names.map((name) => objects.createPair(name)));
    for (const name of names) await expectExactlyOneMail(peer, objects, name);
    // Every touch of a MailgunCluster reconciles both replicas again (touches of Clusters do not: only
    // their creation and spec changes pass the filter); none may send again.
    for (let i = 0; i < 3; i++) {
      await Promise.all(
        names.map((name) =>
          objects.patch('mailgunclusters', name, { metadata: { labels: { touched: String(i) } } }),
        ),
      );
      await Promise.all(
        names.map((name) =>
          objects.patch('clusters', name, { metadata: { labels: { touched: String(i) } } }),
        ),
      );
    }
    await sleep(1500);
    for (const name of names) assert.equal(await mailsFor(peer, name), 1, name);
  });

  it('after a backup/restore that dropped status: the annotation keeps it from sending again', async () => {
    const { objects, peer, namespace } = await suite.setup('mailgun-restore');
    await suite.run(controllerEnv(peer, namespace.name));
    await objects.createPair('original');
    await expectExactlyOneMail(peer, objects, 'original');
    const backup = await objects.getMailgunCluster('original');
    const messageID = backup.metadata?.annotations?.[MESSAGE_ID_ANNOTATION];
    assert.ok(messageID);
    // Restored as backup tools do: annotations and spec, no status, a new UID; the restored Cluster
    // owns it again through Cluster API.
    await objects.createMailgunCluster('restored', {
      annotations: { [MESSAGE_ID_ANNOTATION]: messageID },
      spec: backup.spec,
    });
    await objects.createCluster('restored');
    await eventually(async () => {
      const restored = await objects.getMailgunCluster('restored');
      assert.equal(restored.status?.messageID, messageID);
      assert.equal(condition(restored, 'RequestSent')?.status, 'True');
    }, CAPI_WAIT);
    assert.equal(await mailsFor(peer, 'restored'), 0);
    assert.equal(peer.messageRequests(), 1);
  });
});
