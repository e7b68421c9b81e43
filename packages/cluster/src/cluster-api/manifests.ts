/**
 * Cluster API core's own manifests, read from the pinned module (core/config): its CRDs and its
 * webhook configurations, rewritten for a manager on the loopback the way envtest wires webhooks: a
 * `url` client config with the CA bundle instead of the in-cluster Service that cert-manager's CA
 * injector would complete.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/** The label the release manifests (config/default's kustomization) put on every core object. */
const PROVIDER_LABEL = { 'cluster.x-k8s.io/provider': 'cluster-api' } as const;

/** config/default's `namePrefix`: the release's webhook configurations are `capi-...`. */
const NAME_PREFIX = 'capi-';

export interface WebhookEndpoint {
  /** The manager's webhook server, e.g. `https://127.0.0.1:41234`. */
  baseUrl: string;
  /** Base64 PEM of the CA that signed the server's certificate. */
  caBundle: string;
}

interface Metadata {
  name: string;
  labels?: Record<string, string>;
}

interface ServiceClientConfig {
  service: { path: string };
}

/** A CustomResourceDefinition as far as it is rewritten here; every other field passes through. */
export interface CrdManifest {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
  spec: {
    group: string;
    names: { plural: string };
    versions: { name: string; served: boolean }[];
    conversion?: Conversion;
    [field: string]: unknown;
  };
}

interface Conversion {
  strategy: string;
  webhook?: { clientConfig: ServiceClientConfig | UrlClientConfig; [field: string]: unknown };
}

interface UrlClientConfig {
  url: string;
  caBundle: string;
}

/** A Mutating- or ValidatingWebhookConfiguration as far as it is rewritten here. */
export interface WebhookConfigurationManifest {
  apiVersion: string;
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  metadata: Metadata;
  webhooks: {
    name: string;
    clientConfig: ServiceClientConfig | UrlClientConfig;
    namespaceSelector?: unknown;
    [field: string]: unknown;
  }[];
}

function clientConfig(
  config: ServiceClientConfig | UrlClientConfig,
  endpoint: WebhookEndpoint,
): UrlClientConfig {
  if (!('service' in config))
    throw new Error(`expected a service clientConfig, got ${JSON.stringify(config)}`);
  return { url: `${endpoint.baseUrl}${config.service.path}`, caBundle: endpoint.caBundle };
}

async function readYaml<T>(path: string): Promise<T> {
  return parse(await readFile(path, 'utf8')) as T;
}

/**
 * The CRDs core/config/crd/kustomization.yaml installs, with the conversion webhooks its patches enable
 * pointed at `endpoint`. Throws when a listed file or a patched CRD is missing, so a module whose
 * layout changed fails here rather than as a manager that cannot find its kinds.
 */
export async function coreCrds(moduleDir: string, endpoint: WebhookEndpoint): Promise<CrdManifest[]> {
  const crdDir = join(moduleDir, 'core', 'config', 'crd');
  const kustomization = await readYaml<{ resources: string[]; patches: { path: string }[] }>(
    join(crdDir, 'kustomization.yaml'),
  );
  const crds = new Map<string, CrdManifest>();
  for (const resource of kustomization.resources) {
    const crd = await readYaml<CrdManifest>(join(crdDir, resource));
    crd.metadata.labels = { ...crd.metadata.labels, ...PROVIDER_LABEL };
    crds.set(crd.metadata.name, crd);
  }
  for (const { path } of kustomization.patches) {
    const patch = await readYaml<CrdManifest>(join(crdDir, path));
    const crd = crds.get(patch.metadata.name);
    const conversion = patch.spec.conversion;
    if (!crd || !conversion?.webhook)
      throw new Error(`${path} in ${crdDir} patches no listed CRD's conversion webhook`);
    crd.spec.conversion = {
      ...conversion,
      webhook: {
        ...conversion.webhook,
        clientConfig: clientConfig(conversion.webhook.clientConfig, endpoint),
      },
    };
  }
  return [...crds.values()];
}

/**
 * The mutating and validating webhook configurations of core/config/webhook/manifests.yaml, named as
 * the release names them, calling `endpoint`. With `namespace`, they are limited to that namespace
 * (and named after it), so managers watching different namespaces of one API server each admit their
 * own namespace's objects.
 */
export async function coreWebhookConfigurations(
  moduleDir: string,
  endpoint: WebhookEndpoint,
  namespace?: string,
): Promise<WebhookConfigurationManifest[]> {
  const path = join(moduleDir, 'core', 'config', 'webhook', 'manifests.yaml');
  const documents = parseAllDocuments(await readFile(path, 'utf8'));
  return documents.map((document) => {
    const configuration = document.toJS() as WebhookConfigurationManifest;
    const suffix = namespace === undefined ? '' : `-${namespace}`;
    return {
      ...configuration,
      metadata: {
        ...configuration.metadata,
        name: `${NAME_PREFIX}${configuration.metadata.name}${suffix}`,
        labels: { ...configuration.metadata.labels, ...PROVIDER_LABEL },
      },
      webhooks: configuration.webhooks.map((webhook) => ({
        ...webhook,
        clientConfig: clientConfig(webhook.clientConfig, endpoint),
        ...(namespace === undefined
          ? {}
          : { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } }),
      })),
    };
  });
}
