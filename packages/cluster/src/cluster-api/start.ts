/**
 * `startClusterApi`: the real Cluster API core manager against a test control plane, installed the way
 * a release installs it (its CRDs, conversion and admission webhooks), minus cert-manager: the webhook
 * server's certificate is generated here and the API server calls it on the loopback, as envtest does.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject, type ResourceType } from '@loopwright/client';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { applyCrds, eventually, freeLoopbackPort, ManagedProcess } from '@loopwright/envtest';
import { ensureClusterApiManager, pinnedClusterApi } from './binary.ts';
import { coreCrds, coreWebhookConfigurations, type WebhookConfigurationManifest } from './manifests.ts';
import { generateWebhookCertificates } from './webhook-certificates.ts';

/**
 * The field manager of everything `startClusterApi` applies: the managedFields of a CRD it installed
 * name it, which tells its CRDs from those of a Cluster API installed otherwise (that it must not touch).
 */
export const CLUSTER_API_FIELD_MANAGER = 'loopwright-testing';

export type ClusterApiOptions = ({ kubeconfigPath: string } | { kubeConfig: KubeConfig }) & {
  /**
   * Reconcile only this namespace (the manager's `--namespace`) and admit only its objects, so that
   * test files sharing an API server each run their own manager. Default: every namespace.
   */
  namespace?: string;
  /** How long to wait for the CRDs, the manager and its webhooks. Default 60 s. */
  startTimeoutMs?: number;
  log?: (line: string) => void;
};

/** A running Cluster API core manager. `stop()` is idempotent. */
export interface ClusterApi {
  /** The pinned release, e.g. `v1.14.2`. */
  version: string;
  /** The manager's output (klog text), kept until `stop()`. */
  logPath: string;
  /** The manager's output so far. */
  logs(): Promise<string>;
  /**
   * Stops the manager and removes its admission webhook configurations (they fail closed, so they would
   * block every later write of Cluster API objects). The CRDs stay, with the objects in them; their
   * conversion webhook then has no server until a manager starts again, so only v1beta2 (the stored
   * version, which needs no conversion) can be read meanwhile.
   */
  stop(): Promise<void>;
}

/** GET a loopback URL and report the status code; undefined while nothing answers. */
async function httpStatus(url: string): Promise<number | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return undefined;
  }
}

const webhookConfigurationTypes = {
  MutatingWebhookConfiguration: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
  },
  ValidatingWebhookConfiguration: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
  },
} satisfies Record<WebhookConfigurationManifest['kind'], ResourceType>;

const machines: ResourceType = {
  group: 'cluster.x-k8s.io',
  version: 'v1beta2',
  plural: 'machines',
  kind: 'Machine',
  namespaced: true,
};

/**
 * True once the API server calls the manager's defaulting webhook: a dry-run Machine comes back with
 * the cluster-name label only that webhook sets. The API server picks up a new webhook configuration
 * asynchronously, so until then a create would skip admission silently.
 */
async function defaultingInEffect(client: KubeClient, namespace: string): Promise<boolean> {
  const probe = {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { generateName: 'loopwright-webhook-probe-', namespace },
    spec: {
      clusterName: 'loopwright-webhook-probe',
      bootstrap: { dataSecretName: 'loopwright-webhook-probe' },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProbeMachine', name: 'probe' },
    },
  };
  const created = await client.resource<KubeObject>(machines).create(probe, { dryRun: true });
  return created.metadata?.labels?.['cluster.x-k8s.io/cluster-name'] === probe.spec.clusterName;
}

interface Ports {
  webhook: number;
  health: number;
  diagnostics: number;
}

function managerArgs(kubeconfigPath: string, certDir: string, ports: Ports, namespace?: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    // Leader election stays off (its default): one manager per test, and none to hand over to.
    `--webhook-port=${ports.webhook}`,
    `--webhook-cert-dir=${certDir}`,
    `--health-addr=127.0.0.1:${ports.health}`,
    // Plain HTTP metrics on the loopback: the default serves them over TLS behind TokenReviews.
    `--diagnostics-address=127.0.0.1:${ports.diagnostics}`,
    '--insecure-diagnostics',
    ...(namespace === undefined ? [] : [`--namespace=${namespace}`]),
  ];
}

/**
 * Installs Cluster API core's CRDs (server-side apply, so concurrent callers converge; waits until
 * each is Established), starts the pinned manager against the control plane with its webhook server
 * on a free loopback port, registers its admission webhooks, and resolves once the manager is ready
 * and the API server calls its webhooks. The CRDs' conversion webhooks point at this manager, the
 * latest one started.
 */
export async function startClusterApi(options: ClusterApiOptions): Promise<ClusterApi> {
  const log = options.log ?? (() => undefined);
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const binary = await ensureClusterApiManager({ log });
  const { version, moduleDir } = await pinnedClusterApi();
  const kubeConfig = 'kubeConfig' in options ? options.kubeConfig : new KubeConfig();
  if ('kubeconfigPath' in options) kubeConfig.loadFromFile(options.kubeconfigPath);
  const client = new KubeClient(kubeConfig, {
    rateLimit: false,
    userAgent: CLUSTER_API_FIELD_MANAGER,
    fieldManager: CLUSTER_API_FIELD_MANAGER,
  });
  const webhookConfigurations = (configuration: WebhookConfigurationManifest) =>
    client.resource<KubeObject>(webhookConfigurationTypes[configuration.kind]);
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-cluster-api-'));
  let manager: ManagedProcess | undefined;
  const registered: WebhookConfigurationManifest[] = [];

  const stop = async (): Promise<void> => {
    try {
      for (const configuration of registered.splice(0))
        await webhookConfigurations(configuration).delete({ name: configuration.metadata.name });
    } finally {
      await client.close();
      await manager?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  };

  try {
    let kubeconfigPath: string;
    if ('kubeconfigPath' in options) {
      kubeconfigPath = options.kubeconfigPath;
    } else {
      // The manager reads a file; the caller's KubeConfig may exist only in memory.
      kubeconfigPath = join(dir, 'kubeconfig');
      await writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
    }
    const { certDir, caBundle } = await generateWebhookCertificates(dir);

    // The ports are free when asked for but not held: a manager that loses one to another process
    // exits at once, and the next attempt takes new ones.
    for (let attempt = 1; ; attempt++) {
      const ports: Ports = {
        webhook: await freeLoopbackPort(),
        health: await freeLoopbackPort(),
        diagnostics: await freeLoopbackPort(),
      };
      const endpoint = { baseUrl: `https://127.0.0.1:${ports.webhook}`, caBundle };

      // Before the manager starts: its caches list these kinds and it exits when one is missing.
      await applyCrds(kubeConfig, await coreCrds(moduleDir, endpoint), {
        fieldManager: CLUSTER_API_FIELD_MANAGER,
        timeoutMs,
      });

      manager = new ManagedProcess(
        'cluster-api-manager',
        // The upstream main knows nothing of the harness's exit-with-parent switch: setpriv asks the
        // kernel to stop the manager when the test process dies.
        'setpriv',
        [
          '--pdeathsig',
          'TERM',
          '--',
          binary,
          ...managerArgs(kubeconfigPath, certDir, ports, options.namespace),
        ],
        join(dir, 'manager.log'),
      );
      log(`Cluster API ${version} manager starting (webhooks on ${endpoint.baseUrl})`);
      // /readyz includes the webhook server's started check.
      const deadline = Date.now() + timeoutMs;
      while (!manager.exited && (await httpStatus(`http://127.0.0.1:${ports.health}/readyz`)) !== 200) {
        if (Date.now() > deadline)
          throw new Error(
            `the Cluster API manager is not ready after ${timeoutMs} ms:\n${await manager.tail()}`,
          );
        await sleep(100);
      }
      if (!manager.exited) {
        const configurations = await coreWebhookConfigurations(moduleDir, endpoint, options.namespace);
        for (const configuration of configurations) {
          registered.push(configuration);
          await webhookConfigurations(configuration).apply(configuration, { force: true });
        }
        break;
      }
      const tail = await manager.tail();
      if (attempt === 3 || !tail.includes('address already in use'))
        throw new Error(`the Cluster API manager exited during start-up:\n${tail}`);
    }

    await eventually(
      async () => {
        if (!(await defaultingInEffect(client, options.namespace ?? 'default')))
          throw new Error('the API server does not call the Cluster API defaulting webhook yet');
      },
      { timeoutMs },
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const activeManager = manager;
  return {
    version,
    logPath: activeManager.logPath,
    logs: async () => readFile(activeManager.logPath, 'utf8'),
    stop,
  };
}
