/**
 * The e2e suites' Kubernetes plumbing: one client per kubeconfig and the typed handles of its
 * resources, pod logs, ServiceAccount kubeconfigs from TokenRequest, and what a ServiceAccount may do
 * (SelfSubjectRulesReview).
 */
import { KubeConfig } from '@kubernetes/client-node';
import {
  isAlreadyExists,
  KubeClient,
  type KubeObject,
  type ObjectKey,
  type Resource,
  type ResourceType,
  type TextOptions,
} from '@loopwright/client';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { normalizeRules, type PolicyRule } from './charts.ts';
import { PODS, SECRETS, SELF_SUBJECT_RULES_REVIEWS, SERVICE_ACCOUNTS, type ObjectRef } from './resources.ts';

const clients = new WeakMap<KubeConfig, KubeClient>();

/**
 * The client of `kc`: one per kubeconfig, so a suite's requests share its connections. Without the
 * client-side rate limit: a test polls a handful of objects, and a throttled poll would only be late.
 */
function clientOf(kc: KubeConfig): KubeClient {
  let client = clients.get(kc);
  if (!client) {
    client = new KubeClient(kc, { rateLimit: false, userAgent: 'loopwright-e2e' });
    clients.set(kc, client);
  }
  return client;
}

/** The typed handle of one resource (see resources.ts), with `kc`'s credentials. */
export function resource<K extends KubeObject = KubeObject>(kc: KubeConfig, type: ResourceType): Resource<K> {
  return clientOf(kc).resource<K>(type);
}

/** Whether the object exists (a 404 is false; any other failure throws). */
export async function objectExists(kc: KubeConfig, { type, key }: ObjectRef): Promise<boolean> {
  return (await resource(kc, type).getOptional(key)) !== undefined;
}

/** A pod log read's query parameters (`container`, `follow`, `timestamps`, `previous`...). */
export type PodLogQuery = NonNullable<TextOptions['query']>;

/**
 * A container's log, read whole, with the kubeconfig's credentials and CA. Rejects with a
 * `KubeApiError` on a non-2xx answer (its `status`: 400 the container has not started, 404 no such pod).
 */
export async function readPodLog(
  kc: KubeConfig,
  pod: Required<ObjectKey>,
  query: PodLogQuery,
): Promise<string> {
  return resource(kc, PODS).subresource('log').getText(pod, { query });
}

/**
 * A container's log as it arrives (`follow: true` in `query` follows it): `onText` gets the text as it
 * arrives, and `onOpen` is called once the 2xx answer has begun, with its first piece of text or, for one
 * that ends empty, when it ends; resolves when the server ends the response, or when `signal` aborts
 * (then quietly, without `onOpen` if nothing had arrived); rejects with a `KubeApiError` on a non-2xx
 * answer (see {@link readPodLog}) or a connection that breaks.
 */
export async function streamPodLog(
  kc: KubeConfig,
  pod: Required<ObjectKey>,
  query: PodLogQuery,
  onText: (text: string) => void,
  signal: AbortSignal,
  onOpen: () => void = () => undefined,
): Promise<void> {
  let opened = false;
  for await (const piece of resource(kc, PODS).subresource('log').streamText(pod, { query, signal })) {
    if (!opened) {
      opened = true;
      onOpen();
    }
    onText(piece);
  }
  if (!opened && !signal.aborted) onOpen();
}

/**
 * A Secret the README tells the user to create before the install (the chart only references it). In
 * the README's fixed namespaces a run killed before its cleanup leaves it behind: the next run replaces it.
 */
export async function createOrReplaceSecret(
  kc: KubeConfig,
  namespace: string,
  name: string,
  stringData: Record<string, string>,
): Promise<void> {
  const secrets = resource(kc, SECRETS);
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, stringData };
  try {
    await secrets.create(secret);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    await secrets.update(secret);
  }
}

/** The admin kubeconfig file of the test run (set by the global setup); helm installs with it. */
export function adminKubeconfigPath(): string {
  const path = process.env.KUBECONFIG;
  if (!path) throw new Error('KUBECONFIG is not set: run with --test-global-setup (pnpm run test)');
  return path;
}

export interface ServiceAccountCredentials {
  /** A kubeconfig file holding only the cluster (server + CA) and this token: no admin credential. */
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  token: string;
  /** Removes the kubeconfig file. */
  remove(): Promise<void>;
}

interface TokenRequest extends KubeObject {
  spec: { expirationSeconds: number };
  status?: { token: string };
}

/**
 * Mints a token for the ServiceAccount through the TokenRequest API (what the kubelet does for a
 * projected token) and writes a kubeconfig that holds nothing else, so a process given it has exactly
 * the ServiceAccount's rights.
 */
export async function serviceAccountKubeconfig(
  admin: KubeConfig,
  namespace: string,
  serviceAccount: string,
): Promise<ServiceAccountCredentials> {
  const review = await resource<TokenRequest>(admin, SERVICE_ACCOUNTS)
    .subresource('token')
    .create({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: { namespace, name: serviceAccount },
      spec: { expirationSeconds: 3600 },
    });
  const token = review.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('admin kubeconfig has no current cluster');
  const caData =
    cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server: cluster.server, 'certificate-authority-data': caData } }],
    users: [{ name: serviceAccount, user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: serviceAccount, namespace } }],
    'current-context': 'e2e',
  };
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-e2e-sa-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, stringify(config), { mode: 0o600 });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return { kubeconfigPath, kubeConfig, token, remove: () => rm(dir, { recursive: true, force: true }) };
}

interface SelfSubjectRulesReview extends KubeObject {
  spec: { namespace: string };
  status?: { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[]; incomplete: boolean };
}

/** What the ServiceAccount may do in `namespace`, asked as the ServiceAccount (SelfSubjectRulesReview). */
export async function effectiveRules(
  sa: KubeConfig,
  namespace: string,
): Promise<{ resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[]; incomplete: boolean }> {
  const { status } = await resource<SelfSubjectRulesReview>(sa, SELF_SUBJECT_RULES_REVIEWS).create({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace },
  });
  if (!status) throw new Error(`SelfSubjectRulesReview in ${namespace} returned no status`);
  return {
    resourceRules: normalizeRules(status.resourceRules),
    nonResourceRules: normalizeRules(status.nonResourceRules),
    incomplete: status.incomplete,
  };
}
