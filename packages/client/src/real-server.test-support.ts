/**
 * The client's integration tests against the real API server of the test run (started by
 * `--test-global-setup=../envtest/src/global-setup.ts`, which exports its KUBECONFIG). Not
 * @loopwright/envtest's helpers: that package depends on this one, and a dev dependency back would
 * make a cycle; these few go through the client itself, as the code under test does.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from './client.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import type { KubeObject } from './object.ts';
import type { ResourceType } from './resource-type.ts';

/** The test run's admin kubeconfig: KUBECONFIG as the global setup exported it, and nothing else. */
export function loadTestKubeConfig(): KubeConfig {
  const path = process.env.KUBECONFIG;
  if (path === undefined || path === '') {
    throw new Error(
      'KUBECONFIG is not set: run integration tests with --test-global-setup=../envtest/src/global-setup.ts',
    );
  }
  return loadKubeConfig({ kubeconfig: path });
}

/** Retries `assertion` until it passes, then returns its result; after `timeoutMs`, its last failure. */
async function eventually<T>(assertion: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await sleep(50);
    }
  }
}

export const NAMESPACES: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
};

const SERVICE_ACCOUNTS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
};

export interface TestNamespace {
  name: string;
  /** Deletes the namespace (and so everything in it); the test run does not wait for it to go. */
  cleanup(): Promise<void>;
}

/** A unique name for this run: `prefix-` and 6 hex digits. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/**
 * Creates a uniquely named namespace and waits for its `default` ServiceAccount (the controller
 * manager creates it; a pod is refused until it exists).
 */
export async function createTestNamespace(client: KubeClient, prefix: string): Promise<TestNamespace> {
  const name = uniqueName(prefix);
  const namespaces = client.resource(NAMESPACES);
  await namespaces.create({ metadata: { name, labels: { 'loopwright.dev/test': 'true' } } });
  await eventually(() => client.resource(SERVICE_ACCOUNTS).get({ namespace: name, name: 'default' }), 30_000);
  return {
    name,
    cleanup: async () => {
      await namespaces.delete({ name });
    },
  };
}

const CRDS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

interface Crd extends KubeObject {
  spec?: object;
  status?: { conditions?: { type: string; status: string }[] };
}

/**
 * A CRD `widgets` (kind `Widget`) of a group of its own, with the status subresource and a schema of
 * `spec.size` and `spec.color` and `status.phase`, established when this resolves. Returns its
 * resource type and its cleanup.
 */
export async function createWidgetCrd(
  client: KubeClient,
  scope: 'Namespaced' | 'Cluster',
): Promise<{ type: ResourceType; cleanup(): Promise<void> }> {
  const group = `${uniqueName('w')}.loopwright.dev`;
  const plural = scope === 'Namespaced' ? 'widgets' : 'clusterwidgets';
  const kind = scope === 'Namespaced' ? 'Widget' : 'ClusterWidget';
  const name = `${plural}.${group}`;
  const crds = client.resource<Crd>(CRDS);
  await crds.create({
    metadata: { name },
    spec: {
      group,
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { size: { type: 'integer' }, color: { type: 'string' } },
                },
                status: { type: 'object', properties: { phase: { type: 'string' } } },
              },
            },
          },
        },
      ],
    },
  });
  await eventually(async () => {
    const crd = await crds.get({ name });
    assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
  }, 30_000);
  return {
    type: { group, version: 'v1', plural, kind, namespaced: scope === 'Namespaced' },
    cleanup: async () => {
      await crds.delete({ name });
    },
  };
}
