/**
 * Integration-test support: the chart's CRDs, object helpers for Cluster API's objects and ours, and
 * the controller run as a real child process (`src/main.ts`), so crashes are real SIGKILLs. Cluster
 * API itself (its CRDs, webhooks and core manager) comes from `startClusterApi` of @loopwright/cluster.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { applyCrds, eventually, readCrdDirectory } from '@loopwright/envtest';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { MailgunCluster, MailgunMachine } from '../generated/types.ts';
import { CAPI_GROUP, CAPI_VERSION, INFRA_GROUP, INFRA_VERSION } from '../resource.ts';

const mainPath = fileURLToPath(new URL('../main.ts', import.meta.url));
/** The chart's CRDs: what the tests install is exactly what users install. */
const crdDir = fileURLToPath(new URL('../../../../charts/mailgun-cluster/crds/', import.meta.url));

/** Server-side applies the chart's CRDs and waits until they are served. */
export async function installCrds(kc: KubeConfig): Promise<void> {
  await applyCrds(kc, readCrdDirectory(crdDir), { fieldManager: 'mailgun-cluster-tests' });
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** A Cluster or Machine of Cluster API as the tests read it. */
export interface ClusterApiObject {
  metadata: { name: string; uid: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: {
    paused?: boolean;
    providerID?: string;
    controlPlaneEndpoint?: { host: string; port: number };
  };
  status?: {
    phase?: string;
    initialization?: { infrastructureProvisioned?: boolean };
    conditions?: Condition[];
  };
}

type Plural = 'clusters' | 'machines' | 'mailgunclusters' | 'mailgunmachines';

const GROUP_VERSION: Record<Plural, { group: string; version: string }> = {
  clusters: { group: CAPI_GROUP, version: CAPI_VERSION },
  machines: { group: CAPI_GROUP, version: CAPI_VERSION },
  mailgunclusters: { group: INFRA_GROUP, version: INFRA_VERSION },
  mailgunmachines: { group: INFRA_GROUP, version: INFRA_VERSION },
};

/** What a request object's spec needs, unless a test says otherwise. */
const REQUEST_SPEC = { priority: 'Urgent', requester: 'dev@example.com' } as const;

export class Objects {
  readonly api: CustomObjectsApi;
  readonly namespace: string;
  constructor(kc: KubeConfig, namespace: string) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.namespace = namespace;
  }

  async get<T>(plural: Plural, name: string): Promise<T> {
    return (await this.api.getNamespacedCustomObject({
      ...GROUP_VERSION[plural],
      namespace: this.namespace,
      plural,
      name,
    })) as T;
  }

  getMailgunCluster(name: string): Promise<MailgunCluster> {
    return this.get<MailgunCluster>('mailgunclusters', name);
  }

  getMailgunMachine(name: string): Promise<MailgunMachine> {
    return this.get<MailgunMachine>('mailgunmachines', name);
  }

  /** Whether the object is gone (a 404). */
  async gone(plural: Plural, name: string): Promise<boolean> {
    return this.get(plural, name).then(
      () => false,
      (error: unknown) => {
        if ((error as { code?: number }).code === 404) return true;
        throw error;
      },
    );
  }

  async create<T>(plural: Plural, body: object): Promise<T> {
    return (await this.api.createNamespacedCustomObject({
      ...GROUP_VERSION[plural],
      namespace: this.namespace,
      plural,
      body,
    })) as T;
  }

  async patch(plural: Plural, name: string, patch: object): Promise<void> {
    await this.api.patchNamespacedCustomObject(
      { ...GROUP_VERSION[plural], namespace: this.namespace, plural, name, body: patch },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async delete(plural: Plural, name: string): Promise<void> {
    await this.api.deleteNamespacedCustomObject({
      ...GROUP_VERSION[plural],
      namespace: this.namespace,
      plural,
      name,
    });
  }

  /**
   * Server-side applies one condition of its own to a Cluster's status, as any other writer of the
   * status may: the conditions are a map by type, so Cluster API's own conditions stay.
   */
  async applyClusterCondition(name: string, condition: Required<Condition>): Promise<void> {
    await this.api.patchNamespacedCustomObjectStatus(
      {
        group: CAPI_GROUP,
        version: CAPI_VERSION,
        namespace: this.namespace,
        plural: 'clusters',
        name,
        fieldManager: 'mailgun-cluster-test',
        force: true,
        body: {
          apiVersion: `${CAPI_GROUP}/${CAPI_VERSION}`,
          kind: 'Cluster',
          metadata: { name },
          status: { conditions: [{ ...condition, lastTransitionTime: new Date().toISOString() }] },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
  }

  /** A Cluster whose infrastructureRef names the MailgunCluster of the same name. */
  createCluster(name: string, spec: Record<string, unknown> = {}): Promise<ClusterApiObject> {
    return this.create<ClusterApiObject>('clusters', {
      apiVersion: `${CAPI_GROUP}/${CAPI_VERSION}`,
      kind: 'Cluster',
      metadata: { name },
      spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'MailgunCluster', name }, ...spec },
    });
  }

  /**
   * A Machine of `clusterName` whose infrastructureRef names the MailgunMachine of the same name, with
   * its bootstrap data given as a Secret's name (a Machine needs that or a bootstrap config; nothing
   * here reads the Secret).
   */
  createMachine(name: string, clusterName: string): Promise<ClusterApiObject> {
    return this.create<ClusterApiObject>('machines', {
      apiVersion: `${CAPI_GROUP}/${CAPI_VERSION}`,
      kind: 'Machine',
      metadata: { name },
      spec: {
        clusterName,
        bootstrap: { dataSecretName: `${name}-bootstrap` },
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'MailgunMachine', name },
      },
    });
  }

  /** A MailgunCluster as a user writes it: no owner reference, Cluster API sets that. */
  createMailgunCluster(
    name: string,
    options: { spec?: Partial<MailgunCluster['spec']>; annotations?: Record<string, string> } = {},
  ): Promise<MailgunCluster> {
    return this.create<MailgunCluster>('mailgunclusters', {
      apiVersion: `${INFRA_GROUP}/${INFRA_VERSION}`,
      kind: 'MailgunCluster',
      metadata: { name, ...(options.annotations ? { annotations: options.annotations } : {}) },
      spec: { ...REQUEST_SPEC, request: `a cluster called ${name}`, ...options.spec },
    });
  }

  createMailgunMachine(name: string, spec: Partial<MailgunMachine['spec']> = {}): Promise<MailgunMachine> {
    return this.create<MailgunMachine>('mailgunmachines', {
      apiVersion: `${INFRA_GROUP}/${INFRA_VERSION}`,
      kind: 'MailgunMachine',
      metadata: { name },
      spec: { ...REQUEST_SPEC, request: `a machine called ${name}`, ...spec },
    });
  }

  /** A Cluster and its MailgunCluster; Cluster API's Cluster controller makes the Cluster its owner. */
  async createPair(name: string): Promise<void> {
    await this.createMailgunCluster(name);
    await this.createCluster(name);
  }

  /**
   * Deletes every Cluster of the namespace and waits until Cluster API has finished with them: their
   * finalizer is Cluster API's, so they must go while its manager still runs.
   */
  async deleteClusters(timeoutMs = 60_000): Promise<void> {
    const { group, version } = GROUP_VERSION.clusters;
    await this.api.deleteCollectionNamespacedCustomObject({
      group,
      version,
      namespace: this.namespace,
      plural: 'clusters',
    });
    await eventually(
      async () => {
        const list = (await this.api.listNamespacedCustomObject({
          group,
          version,
          namespace: this.namespace,
          plural: 'clusters',
        })) as { items: unknown[] };
        if (list.items.length > 0) throw new Error(`${list.items.length} Clusters left in ${this.namespace}`);
      },
      { timeoutMs, intervalMs: 250 },
    );
  }
}

export function condition(
  object: { status?: { conditions?: readonly Condition[] } },
  type: string,
): Condition | undefined {
  return object.status?.conditions?.find((c) => c.type === type);
}

export interface ControllerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** Runs src/main.ts as its own process with `env` on top of the test's environment. */
export function startController(env: Record<string, string>): ControllerProcess {
  const child = spawn(process.execPath, ['--conditions=development', mainPath], {
    env: { ...process.env, LOG_FORMAT: 'json', ...env },
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
