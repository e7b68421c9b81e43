/**
 * The controller process against a real API server, Cluster API's own core manager (its CRDs,
 * webhooks and controllers, from `startClusterApi`) and Mailgun's own mock: the provider contract as
 * Cluster API applies it (ownership, provisioning, pause, deletion), exactly one mail per object across
 * reconciles, replicas and crashes, and every Mailgun failure class. Nothing here plays Cluster API: it
 * sets the owner references and copies what the provider reports, the tests only act as users do.
 */
import { EventsV1Api, type EventsV1Event, type KubeConfig } from '@kubernetes/client-node';
import {
  createTestNamespace,
  eventually,
  loadTestKubeConfig,
  startClusterApi,
  startMailgunPeer,
  writeSecretVolume,
  type ClusterApi,
  type MailgunFault,
  type MailgunPeer,
  type TestNamespace,
} from '@loopwright/testing';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import { CAPI_GROUP, CAPI_VERSION, MESSAGE_ID_ANNOTATION, PAUSED_ANNOTATION } from './resource.ts';
import {
  Objects,
  condition,
  installCrds,
  startController,
  type ClusterApiObject,
  type Condition,
  type ControllerProcess,
} from './testing/harness.ts';

const DOMAIN = 'mg.example.com';
const API_KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** Cluster API reconciles each object at most once a second: its steps take seconds, not milliseconds. */
const CAPI_WAIT = { timeoutMs: 30_000, intervalMs: 200 };

let kc: KubeConfig;
const processes: ControllerProcess[] = [];
const contexts: Context[] = [];

interface Context {
  namespace: TestNamespace;
  peer: MailgunPeer;
  objects: Objects;
  clusterApi: ClusterApi;
}

function controllerEnv(
  peer: MailgunPeer,
  namespace: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    MAILGUN_DOMAIN: DOMAIN,
    MAILGUN_API_KEY: API_KEY,
    MAILGUN_URL: peer.url,
    MAIL_RECIPIENT: 'ops@example.com',
    // Generous enough that a loaded CI machine never turns a prompt answer into a timeout (which would
    // rightly take the maybe-sent path and change what a test observes); the timeout tests shorten it.
    MAILGUN_TIMEOUT: '5s',
    MAILGUN_EVENTS_SETTLE_TIME: '6s',
    MAILGUN_UNAUTHORIZED_RETRY_DELAY: '1s',
    LEADER_ELECT: 'false',
    HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
    METRICS_BIND_ADDRESS: '0',
    WATCH_NAMESPACE: namespace,
    ...extra,
  };
}

function run(env: Record<string, string>): ControllerProcess {
  const process = startController(env);
  processes.push(process);
  return process;
}

async function mailsFor(peer: MailgunPeer, clusterName: string): Promise<number> {
  return (await peer.mockAccepted(DOMAIN)).filter(
    (m) => m.subject === `[Urgent] New Cluster ${clusterName} requested`,
  ).length;
}

async function machineMailsFor(peer: MailgunPeer, machineName: string, clusterName: string): Promise<number> {
  return (await peer.mockAccepted(DOMAIN)).filter(
    (m) => m.subject === `[Urgent] New Machine ${machineName} for Cluster ${clusterName} requested`,
  ).length;
}

async function expectExactlyOneMail(peer: MailgunPeer, objects: Objects, name: string): Promise<void> {
  await eventually(
    async () => {
      const object = await objects.getMailgunCluster(name);
      assert.ok(object.status?.messageID, 'messageID recorded');
      assert.equal(object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION], object.status.messageID);
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  const object = await objects.getMailgunCluster(name);
  assert.equal(await mailsFor(peer, name), 1);
  const mail = peer.accepted().find((m) => m.id === object.status?.messageID);
  assert.ok(mail, 'the recorded id is the accepted mail');
  assert.equal(mail.userVariables['loopwright-uid'], object.metadata?.uid);
}

/** Whether an Event is about the MailgunCluster `name` (Cluster API records its own about the Cluster). */
function isAbout(event: EventsV1Event, name: string): boolean {
  return event.regarding?.kind === 'MailgunCluster' && event.regarding.name === name;
}

/** A condition without its timestamps and generation, to compare whole. */
function conditionState(
  object: { status?: { conditions?: readonly Condition[] } },
  type: string,
): Omit<Condition, 'type'> | undefined {
  const found = condition(object, type);
  return found && { status: found.status, reason: found.reason, message: found.message ?? '' };
}

before(async () => {
  kc = loadTestKubeConfig();
  await installCrds(kc);
});

afterEach(async (t) => {
  // A failed test is explained by what the controllers logged, not only by the assertion.
  // Node sets `passed` on every context; @types/node 24 declares it on suites only.
  if ((t as { passed?: boolean }).passed !== false) return;
  for (const [index, p] of processes.entries())
    console.error(
      `--- controller ${index} output (last 60 lines) ---\n${p.output().split('\n').slice(-60).join('\n')}`,
    );
  for (const { namespace, clusterApi } of contexts)
    console.error(
      `--- Cluster API manager of ${namespace.name} (last 30 lines) ---\n${(await clusterApi.logs())
        .split('\n')
        .slice(-30)
        .join('\n')}`,
    );
});

after(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  try {
    // The API key never reaches a log line or an Event.
    for (const p of processes)
      assert.equal(p.output().includes(API_KEY), false, 'API key in controller output');
    const events = kc.makeApiClient(EventsV1Api);
    for (const { namespace } of contexts) {
      const list = await events.listNamespacedEvent({ namespace: namespace.name });
      assert.equal(JSON.stringify(list.items).includes(API_KEY), false, 'API key in an Event');
    }
  } finally {
    // Also after a failed check: a peer or manager left running keeps the test process from exiting.
    // The Clusters carry Cluster API's finalizer: they go while its managers still run.
    await Promise.allSettled(contexts.map(({ objects }) => objects.deleteClusters()));
    await Promise.all(contexts.map(({ clusterApi }) => clusterApi.stop()));
    await Promise.all(contexts.map(({ namespace }) => namespace.cleanup()));
    await Promise.all(contexts.map(({ peer }) => peer.stop()));
  }
});

/** A namespace of its own with a Mailgun peer and Cluster API's core manager reconciling it. */
async function setup(prefix: string): Promise<Context> {
  const namespace = await createTestNamespace(kc, prefix);
  const peer = await startMailgunPeer({ apiKey: API_KEY }).catch(async (error: unknown) => {
    await namespace.cleanup();
    throw error;
  });
  const clusterApi = await startClusterApi({ kubeConfig: kc, namespace: namespace.name }).catch(
    async (error: unknown) => {
      await Promise.all([namespace.cleanup(), peer.stop()]);
      throw error;
    },
  );
  const context = { namespace, peer, objects: new Objects(kc, namespace.name), clusterApi };
  contexts.push(context);
  return context;
}

describe('the Cluster API contract, applied by Cluster API itself', () => {
  let ctx: Context;
  let controller: ControllerProcess;
  before(async () => {
    ctx = await setup('mailgun-contract');
    controller = run(controllerEnv(ctx.peer, ctx.namespace.name));
  });

  it('a Cluster naming a MailgunCluster owns it; one mail; provisioned once the endpoint is filled in; deleted with the Cluster', async () => {
    const { objects, peer } = ctx;
    const requestsBefore = peer.messageRequests();
    await objects.createMailgunCluster('alpha');
    await eventually(
      () => {
        assert.match(controller.output(), /waiting for Cluster controller to set OwnerRef/);
      },
      { timeoutMs: 15_000 },
    );
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
    });
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
    });
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

describe('exactly one mail per cluster', () => {
  it('with two replicas racing (no leader election) and many reconciles', async () => {
    const { objects, peer, namespace } = await setup('mailgun-race');
    run(controllerEnv(peer, namespace.name, { WORKERS: '2' }));
    run(controllerEnv(peer, namespace.name, { WORKERS: '2' }));
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
    const { objects, peer, namespace } = await setup('mailgun-restore');
    run(controllerEnv(peer, namespace.name));
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

  for (const point of ['before-send', 'after-send', 'after-status-patch'] as const) {
    it(`when the controller is SIGKILLed ${point.replace(/-/g, ' ')} and restarted`, async () => {
      const { objects, peer, namespace } = await setup(`mailgun-crash-${point}`);
      const crashing = run(controllerEnv(peer, namespace.name, { LOOPWRIGHT_TEST_CRASH_AT: point }));
      const name = `crash-${point}`;
      await objects.createPair(name);
      const exit = await crashing.exited;
      assert.equal(exit.signal, 'SIGKILL');
      assert.equal(await mailsFor(peer, name), point === 'before-send' ? 0 : 1);
      run(controllerEnv(peer, namespace.name));
      await expectExactlyOneMail(peer, objects, name);
    });
  }
});

describe('Mailgun failures', () => {
  let ctx: Context;
  before(async () => {
    ctx = await setup('mailgun-errors');
    run(controllerEnv(ctx.peer, ctx.namespace.name));
  });

  async function requestSent(name: string) {
    const conditions = (await ctx.objects.getMailgunCluster(name)).status?.conditions;
    return conditions?.find((c) => c.type === 'RequestSent');
  }
  async function warningReasons(name: string): Promise<string[]> {
    const list = await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ctx.namespace.name });
    return list.items.filter((e) => isAbout(e, name) && e.type === 'Warning').map((e) => e.reason ?? '');
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
    });
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
      const list = await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ctx.namespace.name });
      const notes = list.items.filter((e) => isAbout(e, 'echoed')).map((e) => e.note ?? '');
      assert.equal(notes.length, 1);
      assert.match(notes[0] ?? '', /Authorization: Basic \[REDACTED\]/);
      for (const leak of leaks) {
        assert.equal(JSON.stringify(conditions).includes(leak), false, `status carries ${leak}`);
        assert.equal(notes[0]?.includes(leak), false, `Event carries ${leak}`);
      }
    });
  });

  it('401: Unauthorized condition and Event, retried slowly until the key works', async () => {
    const { objects, peer } = ctx;
    peer.setApiKey('key-rotated');
    await objects.createPair('unauthorized');
    await eventually(async () => {
      assert.equal((await requestSent('unauthorized'))?.reason, 'Unauthorized');
      assert.ok((await warningReasons('unauthorized')).includes('Unauthorized'));
    });
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
    });
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

describe('the API key from a Secret volume', () => {
  it('a corrected key is used at the next attempt, without a restart', async (t) => {
    const { objects, peer, namespace } = await setup('mailgun-key-file');
    const volume = mkdtempSync(join(tmpdir(), 'mailgun-key-'));
    t.after(() => {
      rmSync(volume, { recursive: true, force: true });
    });
    const keyFile = writeSecretVolume(volume, { 'api-key': 'key-revoked-0000' })['api-key'] ?? '';
    const controller = run(
      controllerEnv(peer, namespace.name, { MAILGUN_API_KEY: '', MAILGUN_API_KEY_FILE: keyFile }),
    );
    await objects.createPair('key-file');
    await eventually(async () => {
      const conditions = (await objects.getMailgunCluster('key-file')).status?.conditions ?? [];
      assert.equal(conditions.find((c) => c.type === 'RequestSent')?.reason, 'Unauthorized');
    });
    // What the kubelet does when the Secret is corrected: a new directory behind `..data`.
    writeSecretVolume(volume, { 'api-key': API_KEY });
    await expectExactlyOneMail(peer, objects, 'key-file');
    assert.match(controller.output(), /secret file changed: using its new value/);
  });
});

describe('sustained Mailgun failures: held apart, not retried in a loop', () => {
  // Every failed send writes status; were its watch event (or Cluster API mirroring it into the
  // Cluster's status) not filtered out, it would reconcile the object again at once and hammer
  // Mailgun past the queue's backoff. Upper bounds only: a slow machine makes fewer attempts, never more.
  const windowMs = 3000;

  it('401: one attempt per MAILGUN_UNAUTHORIZED_RETRY_DELAY', async () => {
    const { objects, peer, namespace } = await setup('mailgun-401-loop');
    const controller = run(controllerEnv(peer, namespace.name));
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
    const { objects, peer, namespace } = await setup('mailgun-429-loop');
    run(controllerEnv(peer, namespace.name));
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

describe('Mailgun timeouts', () => {
  let ctx: Context;
  before(async () => {
    ctx = await setup('mailgun-timeouts');
    run(
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

function itRetries(context: () => Context, what: string, fault: MailgunFault, requests: number): void {
  it(`${what}: retried, still exactly one mail`, async () => {
    const { objects, peer } = context();
    const name = `retry-${what.split(' ')[0] ?? ''}-${Math.random().toString(36).slice(2, 6)}`;
    const before = peer.messageRequests();
    peer.injectFaults(fault);
    await objects.createPair(name);
    await expectExactlyOneMail(peer, objects, name);
    assert.equal(peer.messageRequests() - before, requests);
  });
}

describe('configuration', () => {
  it('a missing variable exits 2 with one line naming it', async () => {
    const env = controllerEnv({ url: 'http://127.0.0.1:1' } as MailgunPeer, 'default');
    const controller = startController({ ...env, MAIL_RECIPIENT: '' });
    const exit = await controller.exited;
    assert.equal(exit.code, 2);
    const lines = controller.output().trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /^mailgun-cluster: --mail-recipient \/ MAIL_RECIPIENT: required/);
    assert.equal(controller.output().includes(API_KEY), false);
  });
});
