/**
 * The integration tests' objects: the chart's CRDs, and Cluster API's objects and ours as a user
 * creates, reads, patches and deletes them, each through its resource's handle. Cluster API itself
 * (its CRDs, webhooks and core manager) comes from `startClusterApi` of @loopwright/cluster.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  apiVersionOf,
  type KubeClient,
  type KubeObject,
  type ObjectMeta,
  type Resource,
  type ResourceType,
} from '@loopwright/runtime';
import { applyCrds, eventually, readCrdDirectory } from '@loopwright/envtest';
import { fileURLToPath } from 'node:url';
import type { MailgunCluster, MailgunMachine } from './generated/types.ts';
import {
  CAPI_GROUP,
  CAPI_VERSION,
  CLUSTERS,
  INFRA_GROUP,
  MACHINES,
  MAILGUN_CLUSTERS,
  MAILGUN_MACHINES,
} from './resource.ts';

/** The chart's CRDs: what the tests install is exactly what users install. */
const crdDir = fileURLToPath(new URL('../../../charts/mailgun-cluster/crds/', import.meta.url));

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
export interface ClusterApiObject extends KubeObject {
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

const RESOURCES = {
  clusters: CLUSTERS,
  machines: MACHINES,
  mailgunclusters: MAILGUN_CLUSTERS,
  mailgunmachines: MAILGUN_MACHINES,
} satisfies Record<string, ResourceType>;

type Plural = keyof typeof RESOURCES;

/** What a request object's spec needs, unless a test says otherwise. */
const REQUEST_SPEC = { priority: 'Urgent', requester: 'dev@example.com' } as const;

/** The objects of one namespace. */
export class Objects {
  readonly namespace: string;
  readonly #client: KubeClient;

  constructor(client: KubeClient, namespace: string) {
    this.#client = client;
    this.namespace = namespace;
  }

  get<T extends KubeObject>(plural: Plural, name: string): Promise<T> {
    return this.#resource<T>(plural).get({ namespace: this.namespace, name });
  }

  getMailgunCluster(name: string): Promise<MailgunCluster> {
    return this.get<MailgunCluster>('mailgunclusters', name);
  }

  getMailgunMachine(name: string): Promise<MailgunMachine> {
    return this.get<MailgunMachine>('mailgunmachines', name);
  }

  /** Whether the object is gone. */
  async gone(plural: Plural, name: string): Promise<boolean> {
    return (await this.#resource(plural).getOptional({ namespace: this.namespace, name })) === undefined;
  }

  /** Creates `object` in the namespace, its apiVersion and kind filled in; resolves with it as stored. */
  create<T extends KubeObject>(plural: Plural, object: { metadata: ObjectMeta; spec: object }): Promise<T> {
    const type = RESOURCES[plural];
    const body = {
      apiVersion: apiVersionOf(type),
      kind: type.kind,
      ...object,
      metadata: { ...object.metadata, namespace: this.namespace },
    };
    return this.#resource<T>(plural).create(body as KubeObject as T);
  }

  async patch(plural: Plural, name: string, patch: object): Promise<void> {
    await this.#resource(plural).patch({ namespace: this.namespace, name }, { merge: patch });
  }

  async delete(plural: Plural, name: string): Promise<void> {
    await this.#resource(plural).delete({ namespace: this.namespace, name });
  }

  /**
   * Server-side applies one condition of its own to a Cluster's status, as any other writer of the
   * status may: the conditions are a map by type, so Cluster API's own conditions stay.
   */
  async applyClusterCondition(name: string, condition: Required<Condition>): Promise<void> {
    await this.#resource<ClusterApiObject>('clusters').status.patch(
      { namespace: this.namespace, name },
      {
        apply: {
          apiVersion: `${CAPI_GROUP}/${CAPI_VERSION}`,
          kind: 'Cluster',
          metadata: { name, namespace: this.namespace },
          status: { conditions: [{ ...condition, lastTransitionTime: new Date().toISOString() }] },
        },
      },
      { fieldManager: 'mailgun-cluster-test', force: true },
    );
  }

  /** A Cluster whose infrastructureRef names the MailgunCluster of the same name. */
  createCluster(name: string, spec: Record<string, unknown> = {}): Promise<ClusterApiObject> {
    return this.create('clusters', {
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
    return this.create('machines', {
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
    return this.create('mailgunclusters', {
      metadata: { name, ...(options.annotations ? { annotations: options.annotations } : {}) },
      spec: { ...REQUEST_SPEC, request: `a cluster called ${name}`, ...options.spec },
    });
  }

  createMailgunMachine(name: string, spec: Partial<MailgunMachine['spec']> = {}): Promise<MailgunMachine> {
    return this.create('mailgunmachines', {
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
    const clusters = this.#resource('clusters');
    await clusters.deleteCollection({ namespace: this.namespace });
    await eventually(
      async () => {
        const left = (await clusters.list({ namespace: this.namespace })).items.length;
        if (left > 0) throw new Error(`${left} Clusters left in ${this.namespace}`);
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  #resource<T extends KubeObject>(plural: Plural): Resource<T> {
    return this.#client.resource<T>(RESOURCES[plural]);
  }
}

export function condition(
  object: { status?: { conditions?: readonly Condition[] } },
  type: string,
): Condition | undefined {
  return object.status?.conditions?.find((c) => c.type === type);
}
