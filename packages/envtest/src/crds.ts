/**
 * CustomResourceDefinitions for tests: server-side applied (force, under the caller's field manager, so
 * every test file of a run may apply the same ones again and concurrent callers converge), then waited
 * for until each is Established (its API served) and in the API server's discovery. In clusters, charts
 * install them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject, type ResourceType } from '@loopwright/client';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { eventually } from './kube.ts';

/** What is read of a CRD here; every other field is sent as it is. */
export interface Crd {
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: readonly { name: string; served: boolean }[] };
}

/** A CRD as the API server answers it, as far as it is read here. */
interface CrdObject extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

/** The CRDs' resource, for callers that remove the ones they applied. */
export const customResourceDefinitions: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

/** The aggregated discovery document (`/apis`), as far as it is read here. */
export interface GroupDiscoveryList {
  items?: {
    metadata: { name: string };
    versions?: { version: string; resources?: { resource: string }[] }[];
  }[];
}

const AGGREGATED_DISCOVERY = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export interface ApplyCrdsOptions {
  fieldManager: string;
  /** How long each CRD may take to become Established, and then all of them to be discovered. Default 30 s. */
  timeoutMs?: number;
}

/** Applies `crds` in order, then waits until every one is Established and discovered. */
export async function applyCrds(
  kubeConfig: KubeConfig,
  crds: readonly Crd[],
  options: ApplyCrdsOptions,
): Promise<void> {
  const client = new KubeClient(kubeConfig, {
    rateLimit: false,
    userAgent: options.fieldManager,
    fieldManager: options.fieldManager,
  });
  const definitions = client.resource<CrdObject>(customResourceDefinitions);
  try {
    for (const crd of crds) await definitions.apply(crd, { force: true });
    for (const crd of crds)
      await eventually(
        async () => {
          const { status } = await definitions.get({ name: crd.metadata.name });
          if (!status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
            throw new Error(`CRD ${crd.metadata.name} is not Established`);
        },
        { timeoutMs: options.timeoutMs ?? 30_000 },
      );
    // Established means the API serves the kind. Discovery is updated apart, after it, and controllers
    // find kinds there: kube-controller-manager's garbage collector watches only what its discovery
    // lists (a kind it misses is picked up at its next resync, 30 s on), and a manager's RESTMapper
    // fails on a kind it cannot map.
    await eventually(
      async () => {
        const discovery = await readDiscovery(client);
        const missing = crds.flatMap((crd) => undiscovered(crd, discovery));
        if (missing.length > 0)
          throw new Error(`not in the API server's discovery yet: ${missing.join(', ')}`);
      },
      { timeoutMs: options.timeoutMs ?? 30_000 },
    );
  } finally {
    await client.close();
  }
}

/** The API server's aggregated discovery of its groups (a non-resource endpoint: `client.fetch`). */
export async function readDiscovery(client: KubeClient): Promise<GroupDiscoveryList> {
  const response = await client.fetch('/apis', { headers: { Accept: AGGREGATED_DISCOVERY } });
  if (!response.ok) throw new Error(`GET /apis: ${response.status} ${await response.text()}`);
  return (await response.json()) as GroupDiscoveryList;
}

/** Each served version of `crd` whose resource `discovery` does not list, as `group/version/plural`. */
export function undiscovered(crd: Crd, discovery: GroupDiscoveryList): string[] {
  const { group, names, versions } = crd.spec;
  const listed = discovery.items?.find((item) => item.metadata.name === group)?.versions ?? [];
  return versions
    .filter((version) => version.served)
    .filter(
      (version) =>
        !listed.some(
          (entry) =>
            entry.version === version.name && entry.resources?.some((r) => r.resource === names.plural),
        ),
    )
    .map((version) => `${group}/${version.name}/${names.plural}`);
}

/** The CRDs of a chart's `crds/` directory (its `*.yaml` files, sorted by name). */
export function readCrdDirectory(dir: string): Crd[] {
  return readCrdFiles(sortedYamlFiles(dir));
}

/**
 * The CRDs of these files, one per file, in their order (a workspace controller's `crdFiles`); `T` names
 * the fields the caller reads (the files are the charts' own, not checked against it).
 */
export function readCrdFiles<T = Crd>(files: readonly string[]): T[] {
  return files.map((file) => parse(readFileSync(file, 'utf8')) as T);
}

/** The `*.yaml` files of `dir` (absolute paths), sorted; none when `dir` does not exist. */
export function sortedYamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => join(dir, file));
}
