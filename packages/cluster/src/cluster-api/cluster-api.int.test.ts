/**
 * The real Cluster API core manager (startClusterApi) against the test control plane, driven through a
 * throwaway infrastructure provider whose objects the test edits by hand: what Cluster API v1.14 reads
 * from and writes to an infrastructure provider's objects, so that mailgun-cluster can rely on it.
 */
import type { V1OwnerReference } from '@kubernetes/client-node';
import { KubeClient, type ResourceType } from '@loopwright/client';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  applyCrds,
  createTestNamespace,
  customResourceDefinitions,
  eventually,
  loadTestKubeConfig,
  type Crd,
  type TestNamespace,
} from '@loopwright/envtest';
import { startClusterApi, type ClusterApi } from './start.ts';

const INFRA_GROUP = 'infrastructure.test.dev';
const INFRA_VERSION = 'v1alpha1';
const CLUSTER_FINALIZER = 'cluster.cluster.x-k8s.io';
const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** Stands for the provider's own finalizer: Cluster API must wait for it. */
const PROVIDER_FINALIZER = 'infrastructure.test.dev/cleanup';
const WAIT = { timeoutMs: 30_000, intervalMs: 100 };

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    /** Set by the API server: absent only from what the test sends. */
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: V1OwnerReference[];
    deletionTimestamp?: string;
  };
  spec?: Record<string, unknown>;
  status?: { conditions?: Condition[]; [field: string]: unknown };
}

/** An infrastructure kind of the throwaway provider, labelled with the contract versions it follows. */
function infraCrd(kind: string, contractLabels: Record<string, string>): Crd {
  const plural = `${kind.toLowerCase()}s`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${INFRA_GROUP}`, labels: contractLabels },
    spec: {
      group: INFRA_GROUP,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: INFRA_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
  return crd;
}

function condition(object: KubeObject, type: string): Condition | undefined {
  return object.status?.conditions?.find((c) => c.type === type);
}

/** A condition without its timestamps and generation, to compare whole. */
function conditionState(object: KubeObject, type: string): Omit<Condition, 'type'> | undefined {
  const found = condition(object, type);
  return found && { status: found.status, reason: found.reason, message: found.message };
}

// The cases use distinct objects; Cluster API reconciles each object at most once a second (its
// ReconcilerRateLimiting default), so they run side by side.
describe('startClusterApi: the Cluster API core manager', { concurrency: true }, () => {
  let client: KubeClient;
  let ns: TestNamespace;
  let other: TestNamespace;
  let capi: ClusterApi;

  /** An object (or, without a name, a namespace's collection) of one of the kinds the test drives. */
  interface Ref {
    type: ResourceType;
    namespace: string;
    name: string;
  }
  const kinds: Record<string, string> = {
    clusters: 'Cluster',
    machines: 'Machine',
    testclusters: 'TestCluster',
    testmachines: 'TestMachine',
    legacyclusters: 'LegacyCluster',
  };
  const objectOf = (group: string, version: string, plural: string, namespace: string, name: string): Ref => {
    const kind = kinds[plural];
    if (kind === undefined) throw new Error(`no kind for ${plural}`);
    return { type: { group, version, plural, kind, namespaced: true }, namespace, name };
  };
  const clusterApiObject = (version: string, namespace: string, plural: string, name = ''): Ref =>
    objectOf('cluster.x-k8s.io', version, plural, namespace, name);
  const infraObject = (plural: string, name = '', namespace = ns.name): Ref =>
    objectOf(INFRA_GROUP, INFRA_VERSION, plural, namespace, name);
  const handle = (at: Ref) => client.resource<KubeObject>(at.type);

  const get = (at: Ref): Promise<KubeObject> => handle(at).get(at);
  const create = (at: Ref, body: KubeObject): Promise<KubeObject> =>
    handle(at).create({ ...body, metadata: { ...body.metadata, namespace: at.namespace } });
  const mergePatch = (at: Ref, body: object): Promise<KubeObject> => handle(at).patch(at, { merge: body });
  const mergePatchStatus = (at: Ref, body: object): Promise<KubeObject> =>
    handle(at).status.patch(at, { merge: body });
  const remove = async (at: Ref): Promise<void> => {
    await handle(at).delete(at);
  };
  const gone = async (at: Ref): Promise<void> => {
    if ((await handle(at).getOptional(at)) !== undefined)
      throw new Error(`${at.type.plural}/${at.name} still exists`);
  };

  const createInfra = (
    plural: string,
    kind: string,
    name: string,
    namespace = ns.name,
  ): Promise<KubeObject> =>
    create(infraObject(plural, '', namespace), {
      apiVersion: `${INFRA_GROUP}/${INFRA_VERSION}`,
      kind,
      metadata: { name, finalizers: [PROVIDER_FINALIZER] },
      spec: {},
    });
  const createCluster = (name: string, infraKind: string, namespace = ns.name): Promise<KubeObject> =>
    create(clusterApiObject('v1beta2', namespace, 'clusters'), {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name },
      spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: infraKind, name } },
    });
  const createMachine = (name: string, clusterName: string, namespace = ns.name): Promise<KubeObject> =>
    create(clusterApiObject('v1beta2', namespace, 'machines'), {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name },
      spec: {
        clusterName,
        // A Machine needs bootstrap data or a bootstrap config; a ready-made Secret name is the former.
        bootstrap: { dataSecretName: `${name}-bootstrap` },
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'TestMachine', name },
      },
    });
  /** The provider's side of a deletion: it releases its finalizer. */
  const releaseFinalizer = (at: Ref): Promise<KubeObject> =>
    mergePatch(at, { metadata: { finalizers: null } });
  /** Deletes a Cluster whose infrastructure cluster holds the provider's finalizer, and waits until it is gone. */
  const deleteCluster = async (name: string, infraPlural: string): Promise<void> => {
    await remove(clusterApiObject('v1beta2', ns.name, 'clusters', name));
    await eventually(async () => {
      assert.ok((await get(infraObject(infraPlural, name))).metadata.deletionTimestamp);
    }, WAIT);
    await releaseFinalizer(infraObject(infraPlural, name));
    await eventually(() => gone(clusterApiObject('v1beta2', ns.name, 'clusters', name)), WAIT);
  };

  before(async () => {
    const kc = loadTestKubeConfig();
    client = new KubeClient(kc, { rateLimit: false });
    ns = await createTestNamespace(kc, 'cluster-api');
    other = await createTestNamespace(kc, 'cluster-api-unwatched');
    const crds = [
      infraCrd('TestCluster', { 'cluster.x-k8s.io/v1beta2': INFRA_VERSION }),
      infraCrd('TestMachine', { 'cluster.x-k8s.io/v1beta2': INFRA_VERSION }),
      // A provider still on the previous contract, which v1.14 keeps reading.
      infraCrd('LegacyCluster', { 'cluster.x-k8s.io/v1beta1': INFRA_VERSION }),
    ];
    await applyCrds(kc, crds, { fieldManager: 'cluster-api-test' });
    capi = await startClusterApi({ kubeConfig: kc, namespace: ns.name });
  });

  after(async () => {
    await capi.stop();
    await ns.cleanup();
    await other.cleanup();
    await client.close();
  });

  it('installs the CRDs serving v1beta1 and v1beta2, storing v1beta2, converting through the manager', async () => {
    for (const name of ['clusters', 'machines']) {
      const crd = await client
        .resource<{
          metadata: { labels?: Record<string, string> };
          spec: {
            versions: { name: string; served: boolean; storage: boolean }[];
            conversion: { strategy: string };
          };
          status: { storedVersions: string[] };
        }>(customResourceDefinitions)
        .get({ name: `${name}.cluster.x-k8s.io` });
      assert.deepEqual(
        crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
        [
          ['v1beta1', true, false],
          ['v1beta2', true, true],
        ],
      );
      assert.equal(crd.spec.conversion.strategy, 'Webhook');
      assert.deepEqual(crd.status.storedVersions, ['v1beta2']);
      assert.equal(crd.metadata.labels?.['cluster.x-k8s.io/provider'], 'cluster-api');
    }
  });

  it('rejects a Cluster without infrastructure, control plane or topology (its validating webhook)', async () => {
    const error = await create(clusterApiObject('v1beta2', ns.name, 'clusters'), {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'nothing' },
      // Not empty: the schema alone rejects an empty spec.
      spec: { paused: false },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.match(
      String(error),
      /one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set/,
    );
  });

  it('owns the infrastructure cluster, copies its endpoint and failure domains once provisioned, and deletes it', async () => {
    const infra = await createInfra('testclusters', 'TestCluster', 'alpha');
    const cluster = await createCluster('alpha', 'TestCluster');

    await eventually(async () => {
      const current = await get(infraObject('testclusters', 'alpha'));
      // A plain owner (no controller), so that another controller may control the object.
      assert.deepEqual(current.metadata.ownerReferences, [
        { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'alpha', uid: cluster.metadata.uid },
      ]);
      assert.equal(current.metadata.labels?.[CLUSTER_NAME_LABEL], 'alpha');
      const waiting = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'alpha'));
      assert.deepEqual(waiting.metadata.finalizers, [CLUSTER_FINALIZER]);
      assert.equal(waiting.status?.phase, 'Provisioning');
      assert.deepEqual(conditionState(waiting, 'InfrastructureReady'), {
        status: 'False',
        reason: 'NotReady',
        message: 'TestCluster status.initialization.provisioned is false',
      });
    }, WAIT);

    // The provider's side of the v1beta2 contract: the endpoint in spec, provisioning in status.
    await mergePatch(infraObject('testclusters', 'alpha'), {
      spec: { controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 } },
    });
    await mergePatchStatus(infraObject('testclusters', 'alpha'), {
      status: {
        initialization: { provisioned: true },
        failureDomains: [{ name: 'fsn1', controlPlane: true }],
      },
    });
    await eventually(async () => {
      const provisioned = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'alpha'));
      assert.deepEqual(provisioned.spec?.controlPlaneEndpoint, { host: '192.0.2.10', port: 6443 });
      assert.deepEqual(provisioned.status?.initialization, { infrastructureProvisioned: true });
      assert.deepEqual(provisioned.status.failureDomains, [{ name: 'fsn1', controlPlane: true }]);
      assert.equal(provisioned.status.phase, 'Provisioned');
      assert.equal(condition(provisioned, 'InfrastructureReady')?.status, 'True');
    }, WAIT);

    // The same Cluster at v1beta1, converted by the manager's webhook: the reference names the
    // version the infrastructure CRD's contract label declares.
    const legacyView = await get(clusterApiObject('v1beta1', ns.name, 'clusters', 'alpha'));
    assert.deepEqual(legacyView.spec?.infrastructureRef, {
      apiVersion: `${INFRA_GROUP}/${INFRA_VERSION}`,
      kind: 'TestCluster',
      name: 'alpha',
      namespace: ns.name,
    });
    assert.equal(legacyView.status?.infrastructureReady, true);

    await remove(clusterApiObject('v1beta2', ns.name, 'clusters', 'alpha'));
    await eventually(async () => {
      const deleting = await get(infraObject('testclusters', 'alpha'));
      assert.equal(deleting.metadata.uid, infra.metadata.uid);
      assert.ok(deleting.metadata.deletionTimestamp, 'Cluster API deletes the infrastructure cluster');
      const waiting = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'alpha'));
      assert.equal(condition(waiting, 'Deleting')?.reason, 'WaitingForInfrastructureDeletion');
    }, WAIT);
    await releaseFinalizer(infraObject('testclusters', 'alpha'));
    await eventually(() => gone(clusterApiObject('v1beta2', ns.name, 'clusters', 'alpha')), WAIT);
  });

  it('reads a v1beta1-contract infrastructure cluster from status.ready', async () => {
    await createInfra('legacyclusters', 'LegacyCluster', 'legacy');
    await createCluster('legacy', 'LegacyCluster');
    await mergePatch(infraObject('legacyclusters', 'legacy'), {
      spec: { controlPlaneEndpoint: { host: '192.0.2.20', port: 6443 } },
    });
    await mergePatchStatus(infraObject('legacyclusters', 'legacy'), { status: { ready: true } });
    await eventually(async () => {
      const provisioned = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'legacy'));
      assert.deepEqual(provisioned.status?.initialization, { infrastructureProvisioned: true });
      assert.deepEqual(provisioned.spec?.controlPlaneEndpoint, { host: '192.0.2.20', port: 6443 });
    }, WAIT);
    await deleteCluster('legacy', 'legacyclusters');
  });

  it('pauses a paused Cluster and its Machines with a Paused condition, leaving the infrastructure objects alone', async () => {
    await createInfra('testclusters', 'TestCluster', 'paused');
    await createCluster('paused', 'TestCluster');
    await createInfra('testmachines', 'TestMachine', 'paused-0');
    await createMachine('paused-0', 'paused');
    await eventually(async () => {
      assert.ok((await get(infraObject('testmachines', 'paused-0'))).metadata.ownerReferences);
    }, WAIT);

    const pausedState = { status: 'True', reason: 'Paused', message: 'Cluster spec.paused is set to true' };
    await mergePatch(clusterApiObject('v1beta2', ns.name, 'clusters', 'paused'), { spec: { paused: true } });
    await eventually(async () => {
      const cluster = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'paused'));
      assert.deepEqual(conditionState(cluster, 'Paused'), pausedState);
    }, WAIT);
    // The Machine controller watches Clusters only for their control plane's initialisation: a pause
    // does not enqueue the Cluster's Machines, each shows it at its next reconcile (whenever something
    // else brings it, seconds or minutes later). A change of the Machine brings one now.
    const pausedMachine = clusterApiObject('v1beta2', ns.name, 'machines', 'paused-0');
    await mergePatch(pausedMachine, { metadata: { annotations: { 'loopwright.dev/touched': 'true' } } });
    await eventually(async () => {
      const machine = await get(pausedMachine);
      assert.deepEqual(
        conditionState(machine, 'Paused'),
        pausedState,
        JSON.stringify(machine.status?.conditions),
      );
    }, WAIT);
    // Cluster API does not pass the pause on: each provider reads Cluster.spec.paused (or its own
    // object's cluster.x-k8s.io/paused annotation) itself.
    for (const object of [infraObject('testclusters', 'paused'), infraObject('testmachines', 'paused-0')]) {
      const infra = await get(object);
      assert.equal(infra.metadata.annotations, undefined);
      assert.equal(infra.status, undefined);
    }

    await mergePatch(clusterApiObject('v1beta2', ns.name, 'clusters', 'paused'), { spec: { paused: false } });
    await eventually(async () => {
      const resumed = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'paused'));
      assert.equal(condition(resumed, 'Paused')?.reason, 'NotPaused');
    }, WAIT);
    // Deleting the Cluster deletes its Machines first, then its infrastructure.
    await remove(clusterApiObject('v1beta2', ns.name, 'clusters', 'paused'));
    await eventually(async () => {
      assert.ok((await get(infraObject('testmachines', 'paused-0'))).metadata.deletionTimestamp);
      const waiting = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'paused'));
      assert.equal(condition(waiting, 'Deleting')?.reason, 'WaitingForWorkersDeletion');
      assert.equal((await get(infraObject('testclusters', 'paused'))).metadata.deletionTimestamp, undefined);
    }, WAIT);
    await releaseFinalizer(infraObject('testmachines', 'paused-0'));
    await eventually(async () => {
      assert.ok((await get(infraObject('testclusters', 'paused'))).metadata.deletionTimestamp);
    }, WAIT);
    await releaseFinalizer(infraObject('testclusters', 'paused'));
    await eventually(() => gone(clusterApiObject('v1beta2', ns.name, 'clusters', 'paused')), WAIT);
  });

  it("controls a Machine's infrastructure machine, copies providerID and addresses once provisioned, and deletes it", async () => {
    await createInfra('testclusters', 'TestCluster', 'beta');
    const cluster = await createCluster('beta', 'TestCluster');
    const infra = await createInfra('testmachines', 'TestMachine', 'beta-0');
    const machine = await createMachine('beta-0', 'beta');
    // Defaulted by the mutating webhook on the way in.
    assert.equal(machine.metadata.labels?.[CLUSTER_NAME_LABEL], 'beta');
    assert.deepEqual(machine.spec?.deletion, { nodeDeletionTimeoutSeconds: 10 });

    await eventually(async () => {
      const current = await get(infraObject('testmachines', 'beta-0'));
      assert.deepEqual(current.metadata.ownerReferences, [
        {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Machine',
          name: 'beta-0',
          uid: machine.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.equal(current.metadata.labels?.[CLUSTER_NAME_LABEL], 'beta');
      const waiting = await get(clusterApiObject('v1beta2', ns.name, 'machines', 'beta-0'));
      assert.deepEqual(waiting.metadata.finalizers, [MACHINE_FINALIZER]);
      // A Machine without a MachineSet or control plane is adopted by its Cluster.
      assert.deepEqual(
        waiting.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]),
        [['Cluster', 'beta', cluster.metadata.uid]],
      );
      assert.equal(condition(waiting, 'BootstrapConfigReady')?.reason, 'DataSecretProvided');
      assert.equal(condition(waiting, 'InfrastructureReady')?.status, 'False');
    }, WAIT);

    await mergePatch(infraObject('testmachines', 'beta-0'), { spec: { providerID: 'test://beta-0' } });
    await mergePatchStatus(infraObject('testmachines', 'beta-0'), {
      status: {
        initialization: { provisioned: true },
        addresses: [{ type: 'ExternalIP', address: '192.0.2.30' }],
        failureDomain: 'fsn1',
      },
    });
    await eventually(async () => {
      const provisioned = await get(clusterApiObject('v1beta2', ns.name, 'machines', 'beta-0'));
      assert.equal(provisioned.spec?.providerID, 'test://beta-0');
      assert.deepEqual(provisioned.status?.addresses, [{ type: 'ExternalIP', address: '192.0.2.30' }]);
      assert.equal(provisioned.status.failureDomain, 'fsn1');
      // bootstrapDataSecretCreated is only set from a bootstrap config, not for a given dataSecretName.
      assert.deepEqual(provisioned.status.initialization, { infrastructureProvisioned: true });
      assert.equal(condition(provisioned, 'InfrastructureReady')?.status, 'True');
    }, WAIT);

    await remove(clusterApiObject('v1beta2', ns.name, 'machines', 'beta-0'));
    await eventually(async () => {
      const deleting = await get(infraObject('testmachines', 'beta-0'));
      assert.equal(deleting.metadata.uid, infra.metadata.uid);
      assert.ok(deleting.metadata.deletionTimestamp, 'Cluster API deletes the infrastructure machine');
      const waiting = await get(clusterApiObject('v1beta2', ns.name, 'machines', 'beta-0'));
      assert.equal(condition(waiting, 'Deleting')?.reason, 'WaitingForInfrastructureDeletion');
    }, WAIT);
    await releaseFinalizer(infraObject('testmachines', 'beta-0'));
    await eventually(() => gone(clusterApiObject('v1beta2', ns.name, 'machines', 'beta-0')), WAIT);
    await deleteCluster('beta', 'testclusters');
  });

  it('reconciles and admits only the namespace it was started for', async () => {
    const unwatched = await createMachine('elsewhere', 'elsewhere', other.name);
    // No defaulting webhook outside the namespace: the label it sets is missing.
    assert.equal(unwatched.metadata.labels?.[CLUSTER_NAME_LABEL], undefined);
    await createInfra('testclusters', 'TestCluster', 'gamma');
    await createCluster('gamma', 'TestCluster');
    await eventually(async () => {
      const watched = await get(clusterApiObject('v1beta2', ns.name, 'clusters', 'gamma'));
      assert.deepEqual(watched.metadata.finalizers, [CLUSTER_FINALIZER]);
    }, WAIT);
    // Created before the watched Cluster was reconciled, yet never touched.
    const untouched = await get(clusterApiObject('v1beta2', other.name, 'machines', 'elsewhere'));
    assert.equal(untouched.metadata.finalizers, undefined);
    assert.equal(untouched.status, undefined);
    await remove(clusterApiObject('v1beta2', other.name, 'machines', 'elsewhere'));
    await deleteCluster('gamma', 'testclusters');
  });
});
