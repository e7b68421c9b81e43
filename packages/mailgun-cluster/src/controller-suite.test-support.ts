/**
 * What the controller process's integration files share (`*.int.test.ts` beside this file): the
 * controller's environment, mail counting, and `controllerSuite()`, which gives a file namespaces of its
 * own, each with a Mailgun peer and Cluster API's core manager reconciling it, and checks after the
 * file that the API key reached no log line and no Event. Each file owns what it starts and stops it in
 * its own `after`, so the files run side by side against the package's one control plane: Nodes and
 * other cluster-scoped objects are never written, the CRDs are applied with the same contents by every
 * file, and each Cluster API manager reconciles and admits only its own namespace. Their CRDs' conversion
 * webhook points at the latest manager started, which no test here needs: everything is read and written
 * at v1beta2, the version Cluster API stores, which needs no conversion.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type EventsV1Event, type ResourceType } from '@loopwright/runtime';
import { startClusterApi, type ClusterApi } from '@loopwright/cluster';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { startMailgunPeer, type MailgunFault, type MailgunPeer } from '@loopwright/fakes/mailgun';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, afterEach, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Objects, condition, installCrds, type Condition } from './objects.test-support.ts';
import type { SendCheckpoint } from './reconcile.ts';
import { MESSAGE_ID_ANNOTATION } from './resource.ts';

const DOMAIN = 'mg.example.com';
export const API_KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/**
 * How long a test waits for what the controller does through Cluster API (every reconcile of ours waits
 * for Cluster API's owner reference first): Cluster API reconciles each object at most once a second, so
 * its steps take seconds, and on a CI machine running every suite side by side, with a Cluster API
 * manager and a controller per test, many more. A bound on a wait for something that must happen, never
 * a latency target: a pass returns as soon as it happened.
 */
export const CAPI_WAIT = { timeoutMs: 60_000, intervalMs: 200 };
/** A process start, module loading and the first list of every cache, on a busy machine. */
const STARTUP_WAIT = { timeoutMs: 60_000, intervalMs: 100 };

const EVENTS: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};

/** The process: main.ts, or main.ts with the crash tests' hook (main.test-support.ts). */
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const CRASHING_MAIN = fileURLToPath(new URL('./main.test-support.ts', import.meta.url));

export interface ControllerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/**
 * Runs the controller as its own process with `env` on top of the test's environment, so crashes are
 * real SIGKILLs. With `crashAt`, it kills itself the first time a send reaches that checkpoint.
 */
export function startController(
  env: Record<string, string>,
  { crashAt }: { crashAt?: SendCheckpoint } = {},
): ControllerProcess {
  const entry = crashAt === undefined ? MAIN : CRASHING_MAIN;
  const child = spawn(process.execPath, ['--conditions=development', entry], {
    env: {
      ...process.env,
      LOG_FORMAT: 'json',
      ...env,
      ...(crashAt === undefined ? {} : { LOOPWRIGHT_TEST_CRASH_AT: crashAt }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    }),
  );
  return {
    child,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Context {
  namespace: TestNamespace;
  peer: MailgunPeer;
  objects: Objects;
  clusterApi: ClusterApi;
}

export function controllerEnv(
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

export async function mailsFor(peer: MailgunPeer, clusterName: string): Promise<number> {
  return (await peer.mockAccepted(DOMAIN)).filter(
    (m) => m.subject === `[Urgent] New Cluster ${clusterName} requested`,
  ).length;
}

export async function machineMailsFor(
  peer: MailgunPeer,
  machineName: string,
  clusterName: string,
): Promise<number> {
  return (await peer.mockAccepted(DOMAIN)).filter(
    (m) => m.subject === `[Urgent] New Machine ${machineName} for Cluster ${clusterName} requested`,
  ).length;
}

export async function expectExactlyOneMail(peer: MailgunPeer, objects: Objects, name: string): Promise<void> {
  await eventually(async () => {
    const object = await objects.getMailgunCluster(name);
    assert.ok(object.status?.messageID, 'messageID recorded');
    assert.equal(object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION], object.status.messageID);
  }, CAPI_WAIT);
  const object = await objects.getMailgunCluster(name);
  assert.equal(await mailsFor(peer, name), 1);
  const mail = peer.accepted().find((m) => m.id === object.status?.messageID);
  assert.ok(mail, 'the recorded id is the accepted mail');
  assert.equal(mail.userVariables['loopwright-uid'], object.metadata?.uid);
}

/** Whether an Event is about the MailgunCluster `name` (Cluster API records its own about the Cluster). */
export function isAbout(event: EventsV1Event, name: string): boolean {
  return event.regarding.kind === 'MailgunCluster' && event.regarding.name === name;
}

/** A condition without its timestamps and generation, to compare whole. */
export function conditionState(
  object: { status?: { conditions?: readonly Condition[] } },
  type: string,
): Omit<Condition, 'type'> | undefined {
  const found = condition(object, type);
  return found && { status: found.status, reason: found.reason, message: found.message ?? '' };
}

export interface ControllerSuite {
  /** A namespace of its own with a Mailgun peer and Cluster API's core manager reconciling it. */
  setup(prefix: string): Promise<Context>;
  /**
   * Starts the controller process (stopped after the file) and resolves once its caches have synced:
   * a test's own waits then time what the controller does, not how long a busy machine takes to start
   * a process and list. `crashAt`: see {@link startController}.
   */
  run(env: Record<string, string>, options?: { crashAt?: SendCheckpoint }): Promise<ControllerProcess>;
  /** The Events of `namespace`. */
  events(namespace: string): Promise<EventsV1Event[]>;
}

/**
 * Registers the file's hooks (call it at the top level of a test file): the chart's CRDs before the
 * first test; the controllers' and Cluster API managers' output after a failed test; after the file,
 * the API key checks, then everything the file started is stopped.
 */
export function controllerSuite(): ControllerSuite {
  let kc: KubeConfig | undefined;
  let client: KubeClient | undefined;
  const processes: ControllerProcess[] = [];
  const contexts: Context[] = [];
  const kubeConfig = (): KubeConfig => {
    assert.ok(kc, 'the suite runs its tests after its before hook');
    return kc;
  };
  const kubeClient = (): KubeClient => {
    assert.ok(client, 'the suite runs its tests after its before hook');
    return client;
  };
  const events = async (namespace: string): Promise<EventsV1Event[]> =>
    (await kubeClient().resource<EventsV1Event>(EVENTS).list({ namespace })).items;

  before(async () => {
    kc = loadTestKubeConfig();
    client = new KubeClient(kc, { rateLimit: false });
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
      for (const { namespace } of contexts)
        assert.equal(
          JSON.stringify(await events(namespace.name)).includes(API_KEY),
          false,
          'API key in an Event',
        );
    } finally {
      // Also after a failed check: a peer or manager left running keeps the test process from exiting.
      // The Clusters carry Cluster API's finalizer: they go while its managers still run.
      await Promise.allSettled(contexts.map(({ objects }) => objects.deleteClusters()));
      await Promise.all(contexts.map(({ clusterApi }) => clusterApi.stop()));
      await Promise.all(contexts.map(({ namespace }) => namespace.cleanup()));
      await Promise.all(contexts.map(({ peer }) => peer.stop()));
      await client?.close();
    }
  });

  return {
    setup: async (prefix) => {
      const kc = kubeConfig();
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
      const context = { namespace, peer, objects: new Objects(kubeClient(), namespace.name), clusterApi };
      contexts.push(context);
      return context;
    },
    events,
    run: async (env, options) => {
      const process = startController(env, options);
      processes.push(process);
      const exited = process.exited.then(({ code, signal }) => {
        throw new Error(
          `the controller exited (${code ?? signal}) before its caches synced:\n${process.output()}`,
        );
      });
      const synced = eventually(() => {
        assert.match(process.output(), /"message":"caches synced"/);
      }, STARTUP_WAIT);
      // Whichever loses is settled later with no one waiting: an exit a test causes, or a wait cut short.
      exited.catch(() => undefined);
      synced.catch(() => undefined);
      await Promise.race([exited, synced]);
      return process;
    },
  };
}

/** A test that injects `fault` into the next send: retried, still one mail, after `requests` sends. */
export function itRetries(context: () => Context, what: string, fault: MailgunFault, requests: number): void {
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
