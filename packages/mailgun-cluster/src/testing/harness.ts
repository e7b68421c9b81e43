/**
 * Integration-test support: CRDs (the chart's plus minimal test-only Cluster API ones), object helpers
 * and the controller run as a real child process (`src/main.ts`), so crashes are real SIGKILLs.
 */
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  loadYaml,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { eventually } from '@loopwright/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readdirSync, readFileSync } from 'node:fs';
import type { MailgunCluster } from '../generated/types.ts';

const mainPath = fileURLToPath(new URL('../main.ts', import.meta.url));
/** The chart's CRDs: what the tests install is exactly what users install. */
const crdDir = fileURLToPath(new URL('../../../../charts/mailgun-cluster/crds/', import.meta.url));

/** Cluster API's Cluster and Machine, reduced to what the tests write: not part of the chart. */
function capiTestCrd(kind: 'Cluster' | 'Machine'): V1CustomResourceDefinition {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.cluster.x-k8s.io` },
    spec: {
      group: 'cluster.x-k8s.io',
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1beta2',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
        },
      ],
    },
  };
}

export async function installCrds(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const crds = [
    ...readdirSync(crdDir)
      .filter((file) => file.endsWith('.yaml'))
      .map((file) => loadYaml<V1CustomResourceDefinition>(readFileSync(`${crdDir}${file}`, 'utf8'))),
    capiTestCrd('Cluster'),
    capiTestCrd('Machine'),
  ];
  for (const body of crds) {
    await api.createCustomResourceDefinition({ body }).catch((error: unknown) => {
      if ((error as { code?: number }).code !== 409) throw error;
    });
  }
  for (const body of crds) {
    await eventually(
      async () => {
        const crd = await api.readCustomResourceDefinition({ name: body.metadata?.name ?? '' });
        if (!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
          throw new Error('not established');
      },
      { timeoutMs: 20_000 },
    );
  }
}

export class Objects {
  readonly api: CustomObjectsApi;
  readonly namespace: string;
  constructor(kc: KubeConfig, namespace: string) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.namespace = namespace;
  }

  async createCluster(name: string, spec: Record<string, unknown> = {}): Promise<{ uid: string }> {
    const body = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name },
      spec: {
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'MailgunCluster', name },
        ...spec,
      },
    };
    const created = (await this.api.createNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta2',
      namespace: this.namespace,
      plural: 'clusters',
      body,
    })) as { metadata: { uid: string } };
    return { uid: created.metadata.uid };
  }

  async patch(
    group: string,
    plural: string,
    name: string,
    patch: object,
    version = group === 'cluster.x-k8s.io' ? 'v1beta2' : 'v1alpha1',
  ): Promise<void> {
    await this.api.patchNamespacedCustomObject(
      { group, version, namespace: this.namespace, plural, name, body: patch },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** A merge patch of the status subresource, as the object's own controller writes it. */
  async patchStatus(group: string, plural: string, name: string, patch: object): Promise<void> {
    const version = group === 'cluster.x-k8s.io' ? 'v1beta2' : 'v1alpha1';
    await this.api.patchNamespacedCustomObjectStatus(
      { group, version, namespace: this.namespace, plural, name, body: patch },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async createMailgunCluster(
    name: string,
    options: { owner?: { uid: string }; spec?: Partial<MailgunCluster['spec']> } = {},
  ): Promise<void> {
    const body = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'MailgunCluster',
      metadata: {
        name,
        ...(options.owner ? { ownerReferences: [clusterOwner(name, options.owner.uid)] } : {}),
      },
      spec: {
        priority: 'Urgent',
        request: `a cluster called ${name}`,
        requester: 'dev@example.com',
        ...options.spec,
      },
    };
    await this.api.createNamespacedCustomObject({
      group: 'infrastructure.cluster.x-k8s.io',
      version: 'v1alpha1',
      namespace: this.namespace,
      plural: 'mailgunclusters',
      body,
    });
  }

  async getMailgunCluster(name: string): Promise<MailgunCluster> {
    return (await this.api.getNamespacedCustomObject({
      group: 'infrastructure.cluster.x-k8s.io',
      version: 'v1alpha1',
      namespace: this.namespace,
      plural: 'mailgunclusters',
      name,
    })) as MailgunCluster;
  }

  /** A Cluster and its MailgunCluster, owned as the Cluster controller would set it up. */
  async createOwnedPair(name: string, clusterSpec: Record<string, unknown> = {}): Promise<void> {
    const owner = await this.createCluster(name, clusterSpec);
    await this.createMailgunCluster(name, { owner });
  }
}

export function clusterOwner(name: string, uid: string) {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
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
