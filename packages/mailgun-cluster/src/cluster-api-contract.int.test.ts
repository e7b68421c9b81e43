/**
 * The controller process against a real API server, Cluster API's own core manager (its CRDs, webhooks
 * and controllers, from `startClusterApi`) and Mailgun's own mock: the provider contract as Cluster API
 * applies it (ownership, provisioning, pause, deletion). Nothing here plays Cluster API: it sets the
 * owner references and copies what the provider reports, the tests only act as users do.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  API_KEY,
  CAPI_WAIT,
  CLUSTER_NAME_LABEL,
  conditionState,
  controllerEnv,
  controllerSuite,
  expectExactlyOneMail,
  machineMailsFor,
  mailsFor,
  type Context,
  type ControllerProcess,
} from './controller-suite.test-support.ts';
import { condition, type ClusterApiObject } from './objects.test-support.ts';
import { CAPI_GROUP, CAPI_VERSION, PAUSED_ANNOTATION } from './resource.ts';

const suite = controllerSuite();

describe('the Cluster API contract, applied by Cluster API itself', () => {
  let ctx: Context;
  let controller: ControllerProcess;
  before(async () => {
    ctx = await suite.setup('mailgun-contract');
    controller = await suite.run(controllerEnv(ctx.peer, ctx.namespace.name));
  });

  it('a Cluster naming a MailgunCluster owns it; one mail; provisioned once the endpoint is filled in; deleted with the Cluster', async () => {
    const { objects, peer } = ctx;
    const requestsBefore = peer.messageRequests();
    await objects.createMailgunCluster('alpha');
    await eventually(() => {
      assert.match(controller.output(), /waiting for Cluster controller to set OwnerRef/);
    }, CAPI_WAIT);
    assert.equal(await mailsFor(peer, 'alpha'), 0);

    const cluster = await objects.createCluster('alpha');
    await eventually(async () => {
      const owned = await objects.getMailgunCluster('alpha');
      // Cluster API's own reference: a plain owner, not a controller one.
      assert.deepEqual(owned.metadata?.ownerReferences, [
        {
          apiVersion: `${CAPI_GROUP}/${CAPI_VERSION}`,
          kind: 'Cluster',
          name: 'alpha',
          uid: cluster.metadata.uid,
        },
      ]);
      assert.equal(owned.metadata.labels?.[CLUSTER_NAME_LABEL], 'alpha');
    }, CAPI_WAIT);
    await expectExactlyOneMail(peer, objects, 'alpha');
    const requested = await objects.getMailgunCluster('alpha');
    assert.equal(requested.status?.initialization?.provisioned, false);
    // Cluster API mirrors the Ready condition into the Cluster's InfrastructureReady, as it stands.
    await eventually(async () => {
      const waiting = await objects.get<ClusterApiObject>('clusters', 'alpha');
      assert.deepEqual(conditionState(waiting, 'InfrastructureReady'), conditionState(requested, 'Ready'));
      assert.equal(condition(waiting, 'InfrastructureReady')?.reason, 'WaitingForFulfilment');
      assert.equal(waiting.status?.phase, 'Provisioning');
      assert.equal(waiting.status.initialization?.infrastructureProvisioned, undefined);
    }, CAPI_WAIT);

    // What the human who built the cluster does.
    const endpoint = { host: 'api.alpha.example.com', port: 6443 };
    await objects.patch('mailgunclusters', 'alpha', { spec: { controlPlaneEndpoint: endpoint } });
    await eventually(async () => {
      const provisioned = await objects.getMailgunCluster('alpha');
      assert.equal(provisioned.status?.initialization?.provisioned, true);
      assert.equal(provisioned.status.observedGeneration, provisioned.metadata?.generation);
      assert.equal(condition(provisioned, 'Ready')?.status, 'True');
    }, CAPI_WAIT);
    // Cluster API reads the v1beta2 contract's fields: status.initialization.provisioned, then the
    // endpoint from the spec.
    await eventually(async () => {
      const provisioned = await objects.get<ClusterApiObject>('clusters', 'alpha');
      assert.deepEqual(provisioned.status?.initialization, { infrastructureProvisioned: true });
      assert.deepEqual(provisioned.spec.controlPlaneEndpoint, endpoint);
      assert.equal(provisioned.status.phase, 'Provisioned');
      assert.deepEqual(conditionState(provisioned, 'InfrastructureReady'), {
        status: 'True',
        reason: 'Provisioned',
        message: '',
      });
    }, CAPI_WAIT);

    // Deleting the Cluster: Cluster API deletes the MailgunCluster (nothing to undo: a mail cannot be
    // recalled, so the provider holds no finalizer), then lets the Cluster go.
    await objects.delete('clusters', 'alpha');
    await eventually(async () => {
      assert.ok(await objects.gone('mailgunclusters', 'alpha'), 'Cluster API deletes the MailgunCluster');
      assert.ok(await objects.gone('clusters', 'alpha'));
    }, CAPI_WAIT);
    assert.equal(await mailsFor(peer, 'alpha'), 1);
    assert.equal(peer.messageRequests() - requestsBefore, 1);
  });

  it('a Machine naming a MailgunMachine controls it; the pause of its Cluster holds both requests until it is lifted; one mail each; provisioned with a providerID; all deleted with the Cluster', async () => {
    const { objects, peer } = ctx;
    // Every send fails (401, retried each second) until the key is fixed: the requests are pending
    // when the pause comes.
    peer.setApiKey('key-rotated');
    await objects.createPair('fleet');
    await objects.createMailgunMachine('fleet-0');
    const machine = await objects.createMachine('fleet-0', 'fleet');
    await eventually(async () => {
      const owned = await objects.getMailgunMachine('fleet-0');
      // A Machine's reference is a controller one.
      assert.deepEqual(owned.metadata?.ownerReferences, [
        {
          apiVersion: `${CAPI_GROUP}/${CAPI_VERSION}`,
          kind: 'Machine',
          name: 'fleet-0',
          uid: machine.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.equal(owned.metadata.labels?.[CLUSTER_NAME_LABEL], 'fleet');
      assert.equal(condition(owned, 'RequestSent')?.reason, 'Unauthorized');
      assert.equal(
        condition(await objects.getMailgunCluster('fleet'), 'RequestSent')?.reason,
        'Unauthorized',
      );
    }, CAPI_WAIT);

    // Paused through Cluster API: it marks its own objects, the provider its own.
    await objects.patch('clusters', 'fleet', { spec: { paused: true } });
    await eventually(async () => {
      for (const plural of ['clusters', 'machines'] as const) {
        const object = await objects.get<ClusterApiObject>(
          plural,
          plural === 'clusters' ? 'fleet' : 'fleet-0',
        );
        assert.equal(condition(object, 'Paused')?.status, 'True', plural);
      }
      assert.equal(condition(await objects.getMailgunCluster('fleet'), 'Paused')?.status, 'True');
      assert.equal(condition(await objects.getMailgunMachine('fleet-0'), 'Paused')?.status, 'True');
    }, CAPI_WAIT);
    peer.setApiKey(API_KEY);
    // Two unauthorized retry delays: an unpaused provider would have sent both by now.
    await sleep(2500);
    assert.equal(await mailsFor(peer, 'fleet'), 0);
    assert.equal(await machineMailsFor(peer, 'fleet-0', 'fleet'), 0);

    await objects.patch('clusters', 'fleet', { spec: { paused: false } });
    await expectExactlyOneMail(peer, objects, 'fleet');
    await eventually(async () => {
      const requested = await objects.getMailgunMachine('fleet-0');
      assert.ok(requested.status?.messageID);
      assert.equal(condition(requested, 'Paused')?.status, 'False');
      assert.equal(condition(requested, 'Ready')?.reason, 'WaitingForFulfilment');
    }, CAPI_WAIT);
    assert.equal(await machineMailsFor(peer, 'fleet-0', 'fleet'), 1);
    // Touches of the MailgunMachine reconcile it again; none sends again.
    for (let i = 0; i < 3; i += 1)
      await objects.patch('mailgunmachines', 'fleet-0', { metadata: { labels: { touch: String(i) } } });

    await objects.patch('mailgunmachines', 'fleet-0', { spec: { providerID: 'mailgun://fleet-0' } });
    await eventually(async () => {
      const provisioned = await objects.get<ClusterApiObject>('machines', 'fleet-0');
      assert.equal(provisioned.spec.providerID, 'mailgun://fleet-0');
      assert.deepEqual(provisioned.status?.initialization, { infrastructureProvisioned: true });
      assert.deepEqual(conditionState(provisioned, 'InfrastructureReady'), {
        status: 'True',
        reason: 'Provisioned',
        message: '',
      });
    }, CAPI_WAIT);

    // Cluster API's order: the Machine (and with it the MailgunMachine) first, then the MailgunCluster.
    await objects.delete('clusters', 'fleet');
    await eventually(async () => {
      for (const [plural, name] of [
        ['mailgunmachines', 'fleet-0'],
        ['machines', 'fleet-0'],
        ['mailgunclusters', 'fleet'],
        ['clusters', 'fleet'],
      ] as const)
        assert.ok(await objects.gone(plural, name), `${plural}/${name}`);
    }, CAPI_WAIT);
    assert.equal(await mailsFor(peer, 'fleet'), 1);
    assert.equal(await machineMailsFor(peer, 'fleet-0', 'fleet'), 1);
  });

  it('honours the cluster.x-k8s.io/paused annotation on the MailgunCluster, which Cluster API still owns', async () => {
    const { objects, peer } = ctx;
    await objects.createMailgunCluster('annotated', { annotations: { [PAUSED_ANNOTATION]: '' } });
    await objects.createCluster('annotated');
    await eventually(async () => {
      const object = await objects.getMailgunCluster('annotated');
      assert.equal(object.metadata?.ownerReferences?.[0]?.name, 'annotated');
      assert.equal(condition(object, 'Paused')?.status, 'True');
    }, CAPI_WAIT);
    assert.equal(await mailsFor(peer, 'annotated'), 0);
    await objects.patch('mailgunclusters', 'annotated', {
      metadata: { annotations: { [PAUSED_ANNOTATION]: null } },
    });
    await expectExactlyOneMail(peer, objects, 'annotated');
  });
});
