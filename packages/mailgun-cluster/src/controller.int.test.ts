/**
 * The controller process against a real API server and Mailgun's own mock: ownership, pause, exactly
 * one mail per object across reconciles, replicas and crashes, and every Mailgun failure class.
 */
import { EventsV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  createTestNamespace,
  eventually,
  loadTestKubeConfig,
  startMailgunPeer,
  writeSecretVolume,
  type MailgunFault,
  type MailgunPeer,
  type TestNamespace,
} from '@loopwright/testing';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import { MESSAGE_ID_ANNOTATION } from './resource.ts';
import {
  Objects,
  clusterOwner,
  installCrds,
  startController,
  type ControllerProcess,
} from './testing/harness.ts';

const DOMAIN = 'mg.example.com';
const API_KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
const INFRA = 'infrastructure.cluster.x-k8s.io';
const CAPI = 'cluster.x-k8s.io';

let kc: KubeConfig;
const processes: ControllerProcess[] = [];
const namespaces: TestNamespace[] = [];
const peers: MailgunPeer[] = [];

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

before(async () => {
  kc = loadTestKubeConfig();
  await installCrds(kc);
});

afterEach((t) => {
  // A failed test is explained by what the controllers logged, not only by the assertion.
  // Node sets `passed` on every context; @types/node 24 declares it on suites only.
  if ((t as { passed?: boolean }).passed !== false) return;
  for (const [index, p] of processes.entries())
    console.error(
      `--- controller ${index} output (last 60 lines) ---\n${p.output().split('\n').slice(-60).join('\n')}`,
    );
});

after(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  try {
    // The API key never reaches a log line or an Event.
    for (const p of processes)
      assert.equal(p.output().includes(API_KEY), false, 'API key in controller output');
    const events = kc.makeApiClient(EventsV1Api);
    for (const ns of namespaces) {
      const list = await events.listNamespacedEvent({ namespace: ns.name });
      assert.equal(JSON.stringify(list.items).includes(API_KEY), false, 'API key in an Event');
    }
  } finally {
    // Also after a failed check: a peer left running keeps the test process from ever exiting.
    await Promise.all(namespaces.map((ns) => ns.cleanup()));
    await Promise.all(peers.map((peer) => peer.stop()));
  }
});

async function setup(prefix: string): Promise<{ peer: MailgunPeer; objects: Objects; namespace: string }> {
  const ns = await createTestNamespace(kc, prefix);
  namespaces.push(ns);
  const peer = await startMailgunPeer({ apiKey: API_KEY });
  peers.push(peer);
  return { peer, objects: new Objects(kc, ns.name), namespace: ns.name };
}

describe('ownership, pause and the contract fields', () => {
  let ctx: Awaited<ReturnType<typeof setup>>;
  before(async () => {
    ctx = await setup('mailgun-owner');
    run(controllerEnv(ctx.peer, ctx.namespace));
  });

  it('waits for the owner Cluster, then sends once; provisioned once the endpoint is filled in', async () => {
    const { objects, peer } = ctx;
    await objects.createMailgunCluster('orphan');
    await eventually(
      () => {
        assert.match(processes[0]?.output() ?? '', /waiting for Cluster controller to set OwnerRef/);
      },
      { timeoutMs: 15_000 },
    );
    assert.equal(await mailsFor(peer, 'orphan'), 0);
    const owner = await objects.createCluster('orphan');
    await objects.patch(INFRA, 'mailgunclusters', 'orphan', {
      metadata: { ownerReferences: [clusterOwner('orphan', owner.uid)] },
    });
    await expectExactlyOneMail(peer, objects, 'orphan');
    let object = await objects.getMailgunCluster('orphan');
    const conditions = object.status?.conditions ?? [];
    assert.equal(object.status?.initialization?.provisioned, false);
    assert.equal(conditions.find((c) => c.type === 'RequestSent')?.status, 'True');
    assert.equal(conditions.find((c) => c.type === 'Ready')?.reason, 'WaitingForFulfilment');

    await objects.patch(INFRA, 'mailgunclusters', 'orphan', {
      spec: { controlPlaneEndpoint: { host: 'api.orphan.example.com', port: 6443 } },
    });
    await eventually(async () => {
      object = await objects.getMailgunCluster('orphan');
      assert.equal(object.status?.initialization?.provisioned, true);
      assert.equal(object.status.ready, true);
      assert.equal(object.status.observedGeneration, object.metadata?.generation);
      assert.equal(object.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    });
    assert.equal(await mailsFor(peer, 'orphan'), 1);
  });

  it('does nothing while the Cluster is paused and resumes when unpaused', async () => {
    const { objects, peer } = ctx;
    await objects.createOwnedPair('paused', { paused: true });
    await eventually(async () => {
      const object = await objects.getMailgunCluster('paused');
      assert.equal(object.status?.conditions?.find((c) => c.type === 'Paused')?.status, 'True');
    });
    await sleep(500);
    assert.equal(await mailsFor(peer, 'paused'), 0);
    await objects.patch(CAPI, 'clusters', 'paused', { spec: { paused: false } });
    await expectExactlyOneMail(peer, objects, 'paused');
    const object = await objects.getMailgunCluster('paused');
    assert.equal(object.status?.conditions?.find((c) => c.type === 'Paused')?.status, 'False');
  });

  it('honours the cluster.x-k8s.io/paused annotation on the MailgunCluster', async () => {
    const { objects, peer } = ctx;
    const owner = await objects.createCluster('annotated');
    await objects.api.createNamespacedCustomObject({
      group: INFRA,
      version: 'v1alpha1',
      namespace: ctx.namespace,
      plural: 'mailgunclusters',
      body: {
        apiVersion: `${INFRA}/v1alpha1`,
        kind: 'MailgunCluster',
        metadata: {
          name: 'annotated',
          annotations: { 'cluster.x-k8s.io/paused': '' },
          ownerReferences: [clusterOwner('annotated', owner.uid)],
        },
        spec: { priority: 'Urgent', request: 'x', requester: 'dev@example.com' },
      },
    });
    await eventually(async () => {
      assert.equal(
        (await objects.getMailgunCluster('annotated')).status?.conditions?.find((c) => c.type === 'Paused')
          ?.status,
        'True',
      );
    });
    assert.equal(await mailsFor(peer, 'annotated'), 0);
    await objects.patch(INFRA, 'mailgunclusters', 'annotated', {
      metadata: { annotations: { 'cluster.x-k8s.io/paused': null } },
    });
    await expectExactlyOneMail(peer, objects, 'annotated');
  });
});

describe('MailgunMachine', () => {
  it('sends one request mail per Machine, naming its Cluster, and records the id', async () => {
    const { objects, peer, namespace } = await setup('mailgun-machine');
    run(controllerEnv(peer, namespace));
    await objects.createCluster('fleet');
    const machine = (await objects.api.createNamespacedCustomObject({
      group: CAPI,
      version: 'v1beta2',
      namespace,
      plural: 'machines',
      body: {
        apiVersion: `${CAPI}/v1beta2`,
        kind: 'Machine',
        metadata: { name: 'worker-1' },
        spec: { clusterName: 'fleet' },
      },
    })) as { metadata: { uid: string } };
    await objects.api.createNamespacedCustomObject({
      group: INFRA,
      version: 'v1alpha1',
      namespace,
      plural: 'mailgunmachines',
      body: {
        apiVersion: `${INFRA}/v1alpha1`,
        kind: 'MailgunMachine',
        metadata: {
          name: 'worker-1',
          ownerReferences: [
            {
              apiVersion: `${CAPI}/v1beta2`,
              kind: 'Machine',
              name: 'worker-1',
              uid: machine.metadata.uid,
              controller: true,
            },
          ],
        },
        spec: { priority: 'BusinessCritical', request: 'one more worker', requester: 'dev@example.com' },
      },
    });
    const subject = '[BusinessCritical] New Machine worker-1 for Cluster fleet requested';
    const recorded = async (): Promise<{ status?: { messageID?: string } }> =>
      (await objects.api.getNamespacedCustomObject({
        group: INFRA,
        version: 'v1alpha1',
        namespace,
        plural: 'mailgunmachines',
        name: 'worker-1',
      })) as { status?: { messageID?: string } };
    await eventually(
      async () => {
        assert.ok((await recorded()).status?.messageID);
      },
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );
    // More reconciles (spec-less touches) never send again.
    for (let i = 0; i < 3; i += 1)
      await objects.patch(INFRA, 'mailgunmachines', 'worker-1', {
        metadata: { labels: { touch: String(i) } },
      });
    await sleep(1000);
    const mails = (await peer.mockAccepted(DOMAIN)).filter((m) => m.subject === subject);
    assert.equal(mails.length, 1);
    assert.equal(
      peer.accepted().find((m) => m.subject === subject)?.id,
      (await recorded()).status?.messageID,
    );
  });
});

describe('exactly one mail per cluster', () => {
  it('with two replicas racing (no leader election) and many reconciles', async () => {
    const { objects, peer, namespace } = await setup('mailgun-race');
    run(controllerEnv(peer, namespace, { WORKERS: '2' }));
    run(controllerEnv(peer, namespace, { WORKERS: '2' }));
    const names = ['race-a', 'race-b', 'race-c', 'race-d'];
    await Promise.all(names.map((name) => objects.createOwnedPair(name)));
    for (const name of names) await expectExactlyOneMail(peer, objects, name);
    // Every touch of a MailgunCluster reconciles both replicas again (touches of Clusters do not: only
    // their creation and spec changes pass the filter); none may send again.
    for (let i = 0; i < 3; i++) {
      await Promise.all(
        names.map((name) =>
          objects.patch(INFRA, 'mailgunclusters', name, { metadata: { labels: { touched: String(i) } } }),
        ),
      );
      await Promise.all(
        names.map((name) =>
          objects.patch(CAPI, 'clusters', name, { metadata: { labels: { touched: String(i) } } }),
        ),
      );
    }
    await sleep(1500);
    for (const name of names) assert.equal(await mailsFor(peer, name), 1, name);
  });

  it('after a backup/restore that dropped status: the annotation keeps it from sending again', async () => {
    const { objects, peer, namespace } = await setup('mailgun-restore');
    run(controllerEnv(peer, namespace));
    await objects.createOwnedPair('original');
    await expectExactlyOneMail(peer, objects, 'original');
    const backup = await objects.getMailgunCluster('original');
    const messageID = backup.metadata?.annotations?.[MESSAGE_ID_ANNOTATION];
    assert.ok(messageID);
    // Restored as backup tools do: metadata (annotations, ownerRefs) and spec, no status, a new UID.
    const owner = await objects.createCluster('restored');
    await objects.api.createNamespacedCustomObject({
      group: INFRA,
      version: 'v1alpha1',
      namespace,
      plural: 'mailgunclusters',
      body: {
        apiVersion: `${INFRA}/v1alpha1`,
        kind: 'MailgunCluster',
        metadata: {
          name: 'restored',
          annotations: { [MESSAGE_ID_ANNOTATION]: messageID },
          ownerReferences: [clusterOwner('restored', owner.uid)],
        },
        spec: backup.spec,
      },
    });
    await eventually(async () => {
      const restored = await objects.getMailgunCluster('restored');
      assert.equal(restored.status?.messageID, messageID);
      assert.equal(restored.status.conditions?.find((c) => c.type === 'RequestSent')?.status, 'True');
    });
    assert.equal(await mailsFor(peer, 'restored'), 0);
    assert.equal(peer.messageRequests(), 1);
  });

  for (const point of ['before-send', 'after-send', 'after-status-patch'] as const) {
    it(`when the controller is SIGKILLed ${point.replace(/-/g, ' ')} and restarted`, async () => {
      const { objects, peer, namespace } = await setup(`mailgun-crash-${point}`);
      const crashing = run(controllerEnv(peer, namespace, { LOOPWRIGHT_TEST_CRASH_AT: point }));
      const name = `crash-${point}`;
      await objects.createOwnedPair(name);
      const exit = await crashing.exited;
      assert.equal(exit.signal, 'SIGKILL');
      assert.equal(await mailsFor(peer, name), point === 'before-send' ? 0 : 1);
      run(controllerEnv(peer, namespace));
      await expectExactlyOneMail(peer, objects, name);
    });
  }
});

describe('Mailgun failures', () => {
  let ctx: Awaited<ReturnType<typeof setup>>;
  before(async () => {
    ctx = await setup('mailgun-errors');
    run(controllerEnv(ctx.peer, ctx.namespace));
  });

  async function warningReasons(name: string): Promise<string[]> {
    const list = await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ctx.namespace });
    return list.items
      .filter((e) => e.regarding?.name === name && e.type === 'Warning')
      .map((e) => e.reason ?? '');
  }

  it('4xx: Rejected condition and a Warning Event, no retry until the spec changes', async () => {
    const { objects, peer } = ctx;
    const before = peer.messageRequests();
    peer.injectFaults({ status: 400, body: { message: "'from' parameter is not a valid address" } });
    await objects.createOwnedPair('rejected');
    await eventually(async () => {
      const condition = (await objects.getMailgunCluster('rejected')).status?.conditions?.find(
        (c) => c.type === 'RequestSent',
      );
      assert.equal(condition?.reason, 'Rejected');
      assert.match(condition.message ?? '', /not a valid address/);
      assert.deepEqual(await warningReasons('rejected'), ['Rejected']);
    });
    await sleep(1500);
    assert.equal(peer.messageRequests() - before, 1, 'not retried');
    await objects.patch(INFRA, 'mailgunclusters', 'rejected', { spec: { request: 'a corrected request' } });
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
    await objects.createOwnedPair('echoed');
    await eventually(async () => {
      const conditions = (await objects.getMailgunCluster('echoed')).status?.conditions ?? [];
      const requestSent = conditions.find((c) => c.type === 'RequestSent');
      assert.equal(requestSent?.reason, 'Rejected');
      assert.match(requestSent.message ?? '', /Authorization: Basic \[REDACTED\]/);
      const list = await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ctx.namespace });
      const notes = list.items.filter((e) => e.regarding?.name === 'echoed').map((e) => e.note ?? '');
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
    await objects.createOwnedPair('unauthorized');
    await eventually(async () => {
      assert.equal(
        (await objects.getMailgunCluster('unauthorized')).status?.conditions?.find(
          (c) => c.type === 'RequestSent',
        )?.reason,
        'Unauthorized',
      );
      assert.ok((await warningReasons('unauthorized')).includes('Unauthorized'));
    });
    peer.setApiKey(API_KEY);
    await expectExactlyOneMail(peer, objects, 'unauthorized');
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
  it('a corrected key is used at the next attempt, without a restart', async () => {
    const { objects, peer, namespace } = await setup('mailgun-key-file');
    const volume = mkdtempSync(join(tmpdir(), 'mailgun-key-'));
    const keyFile = writeSecretVolume(volume, { 'api-key': 'key-revoked-0000' })['api-key'] ?? '';
    const controller = run(
      controllerEnv(peer, namespace, { MAILGUN_API_KEY: '', MAILGUN_API_KEY_FILE: keyFile }),
    );
    await objects.createOwnedPair('key-file');
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
    const controller = run(controllerEnv(peer, namespace));
    peer.setApiKey('key-rotated');
    await objects.createOwnedPair('locked-out');
    const attempts = () => controller.output().split('retrying slowly').length - 1;
    await eventually(() => {
      assert.ok(attempts() >= 1);
    });
    const first = attempts();
    await sleep(windowMs);
    // 1 s apart: at most 3 more in 3 s, plus one for timer jitter.
    assert.ok(attempts() - first <= 4, `${attempts() - first} attempts in ${windowMs} ms`);
  });

  it('429: exponentially further apart, however often Cluster API rewrites the Cluster status', async () => {
    const { objects, peer, namespace } = await setup('mailgun-429-loop');
    run(controllerEnv(peer, namespace));
    peer.injectFaults(...Array.from({ length: 100 }, () => ({ status: 429 })));
    await objects.createOwnedPair('rate-limited');
    await eventually(() => {
      assert.ok(peer.messageRequests() >= 1);
    });
    const first = peer.messageRequests();
    // What Cluster API's Cluster controller does after each status change of its infrastructure object.
    const mirrors = 15;
    for (let i = 0; i < mirrors; i++) {
      await objects.patchStatus(CAPI, 'clusters', 'rate-limited', { status: { mirrored: i } });
      await sleep(windowMs / mirrors);
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
  let ctx: Awaited<ReturnType<typeof setup>>;
  before(async () => {
    ctx = await setup('mailgun-timeouts');
    run(
      controllerEnv(ctx.peer, ctx.namespace, {
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

function itRetries(
  context: () => Awaited<ReturnType<typeof setup>>,
  what: string,
  fault: MailgunFault,
  requests: number,
): void {
  it(`${what}: retried, still exactly one mail`, async () => {
    const { objects, peer } = context();
    const name = `retry-${what.split(' ')[0] ?? ''}-${Math.random().toString(36).slice(2, 6)}`;
    const before = peer.messageRequests();
    peer.injectFaults(fault);
    await objects.createOwnedPair(name);
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
