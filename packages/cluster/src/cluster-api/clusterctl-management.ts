/**
 * A management cluster that `clusterctl init --infrastructure mailgun` can install into, on this
 * machine. clusterctl expects two things it would otherwise fetch from GitHub and pull from public
 * registries, neither reachable here:
 *
 * - Cluster API's core provider. Here the real core manager runs as the harness's host process
 *   (start.ts), so it is registered in clusterctl's inventory (a `Provider` in `capi-system`, as
 *   clusterctl records the providers it installs) and clusterctl's configuration names a local
 *   repository holding the release's `metadata.yaml` (from the pinned Cluster API module) for it.
 * - cert-manager. clusterctl checks its API by creating an Issuer and a Certificate, and installs it
 *   unless they can be created. Its controller's Go modules are not served by the module proxy this
 *   machine reaches (only the main module, with its CRDs), and neither mailgun-cluster nor the host
 *   process core manager needs certificates from it, so its CRDs are applied, at the version clusterctl
 *   pins, and the configuration says `externallyProvisioned` (clusterctl's setting for a cert-manager
 *   the user manages; it then only checks the API).
 *
 * Everything is undone by {@link ClusterctlManagement.remove}.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { KubeClient, type KubeObject, type ResourceType } from '@loopwright/client';
import { applyCrds, customResourceDefinitions, namespaces, type Crd } from '@loopwright/envtest';
import { pinnedClusterApi } from './binary.ts';

const run = promisify(execFile);

/** Where clusterctl would have installed the core provider: its inventory entry goes there. */
const CORE_PROVIDER_NAMESPACE = 'capi-system';
const FIELD_MANAGER = 'loopwright-clusterctl-management';
const CERT_MANAGER_CRDS = ['cert-manager.io_issuers.yaml', 'cert-manager.io_certificates.yaml'];
/** An entry of clusterctl's inventory (`Provider`), as far as it is written here. */
interface InventoryEntry extends KubeObject {
  providerName: string;
  type: 'CoreProvider';
  version: string;
}
const providers: ResourceType = {
  group: 'clusterctl.cluster.x-k8s.io',
  version: 'v1alpha3',
  plural: 'providers',
  kind: 'Provider',
  namespaced: true,
};

export interface ClusterctlManagement {
  /** A clusterctl configuration: the given providers, the core provider's local repository, cert-manager external. */
  configPath: string;
  /** Deletes the inventory entry, its namespace and the cert-manager CRDs. */
  remove(): Promise<void>;
}

/** The cert-manager version the pinned clusterctl installs (`CertManagerDefaultVersion`). */
async function clusterctlCertManagerVersion(clusterApiModuleDir: string): Promise<string> {
  const source = await readFile(
    join(clusterApiModuleDir, 'cmd', 'clusterctl', 'client', 'config', 'cert_manager_client.go'),
    'utf8',
  );
  const version = /CertManagerDefaultVersion\s*=\s*"(v[^"]+)"/.exec(source)?.[1];
  if (!version) throw new Error('no CertManagerDefaultVersion in clusterctl’s cert_manager_client.go');
  return version;
}

/** The directory of a Go module in the module cache, downloading it first if needed. */
async function goModuleDir(path: string, version: string): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', `${path}@${version}`], {
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const dir = (JSON.parse(stdout) as { Dir?: string; Error?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${path}@${version}: ${stdout}`);
  return dir;
}

/**
 * Prepares the cluster of `kubeConfig` and writes, into `dir`, a clusterctl configuration with the
 * providers of `providersConfigPath` (a release's clusterctl.yaml) added.
 */
export async function prepareClusterctlManagement(
  kubeConfig: KubeConfig,
  providersConfigPath: string,
  dir: string,
): Promise<ClusterctlManagement> {
  const clusterApi = await pinnedClusterApi();
  const certManagerDir = await goModuleDir(
    'github.com/cert-manager/cert-manager',
    await clusterctlCertManagerVersion(clusterApi.moduleDir),
  );
  const crdOf = async (path: string) => parse(await readFile(path, 'utf8')) as Crd;
  const crds = [
    ...(await Promise.all(
      CERT_MANAGER_CRDS.map((file) => crdOf(join(certManagerDir, 'deploy', 'crds', file))),
    )),
    // clusterctl's inventory, as `clusterctl init` applies it.
    ...parseAllDocuments(
      await readFile(
        join(clusterApi.moduleDir, 'cmd', 'clusterctl', 'config', 'manifest', 'clusterctl-api.yaml'),
        'utf8',
      ),
    ).map((document) => document.toJS() as Crd),
  ];
  await applyCrds(kubeConfig, crds, { fieldManager: FIELD_MANAGER });

  const client = new KubeClient(kubeConfig, { rateLimit: false, fieldManager: FIELD_MANAGER });
  try {
    await client.resource(namespaces).apply({ metadata: { name: CORE_PROVIDER_NAMESPACE } }, { force: true });
    await client.resource<InventoryEntry>(providers).apply(
      {
        apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
        kind: 'Provider',
        metadata: {
          name: 'cluster-api',
          namespace: CORE_PROVIDER_NAMESPACE,
          // The labels clusterctl puts on the inventory entries it writes.
          labels: {
            'cluster.x-k8s.io/provider': 'cluster-api',
            'clusterctl.cluster.x-k8s.io': '',
            'clusterctl.cluster.x-k8s.io/core': 'inventory',
          },
        },
        providerName: 'cluster-api',
        type: 'CoreProvider',
        version: clusterApi.version,
      },
      { force: true },
    );
  } finally {
    await client.close();
  }

  // The core provider's repository: the release's metadata.yaml is all clusterctl reads of it.
  const coreDir = join(dir, 'cluster-api', clusterApi.version);
  await mkdir(coreDir, { recursive: true });
  await copyFile(join(clusterApi.moduleDir, 'metadata.yaml'), join(coreDir, 'metadata.yaml'));
  const given = parse(await readFile(providersConfigPath, 'utf8')) as { providers?: unknown[] };
  const configPath = join(dir, 'clusterctl.yaml');
  await writeFile(
    configPath,
    stringify({
      providers: [
        { name: 'cluster-api', type: 'CoreProvider', url: `file://${join(coreDir, 'core-components.yaml')}` },
        ...(given.providers ?? []),
      ],
      'cert-manager': { externallyProvisioned: 'true' },
    }),
  );

  return {
    configPath,
    async remove() {
      const cleanup = new KubeClient(kubeConfig, { rateLimit: false });
      // Best effort, as a test's clean-up is: what is gone already, or cannot be removed now, stays so.
      const remove = (type: ResourceType, name: string) =>
        cleanup
          .resource(type)
          .delete({ name })
          .catch(() => undefined);
      try {
        await remove(namespaces, CORE_PROVIDER_NAMESPACE);
        for (const crd of crds) await remove(customResourceDefinitions, crd.metadata.name);
      } finally {
        await cleanup.close();
      }
    },
  };
}
