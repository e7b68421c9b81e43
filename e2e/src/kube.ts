/**
 * The e2e suites' Kubernetes plumbing: raw API requests, ServiceAccount kubeconfigs from TokenRequest,
 * and what a ServiceAccount may do (SelfSubjectRulesReview).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { normalizeRules, type PolicyRule } from './charts.ts';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  constructor(method: string, path: string, status: number, body: string) {
    super(`${method} ${path}: ${status} ${body.slice(0, 500)}`);
    this.status = status;
  }
}

/** One request with the kubeconfig's credentials and CA; the response body as text. */
export async function apiText(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<string> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(path, cluster.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload !== undefined) headers['content-type'] = contentType;
  const options: RequestOptions = { method, headers };
  await kc.applyToHTTPSOptions(options);
  return new Promise<string>((resolve, reject) => {
    const req = httpsRequest(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) >= 300) reject(new ApiError(method, path, res.statusCode ?? 0, text));
        else resolve(text);
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * A long-running GET (a watch, a followed log): `onOpen` is called when a 2xx answer starts, `onText`
 * gets the body as it arrives; resolves when the server ends the response, or when `signal` aborts
 * (then quietly); rejects with {@link ApiError} on a non-2xx answer and with the socket's error otherwise.
 */
export async function apiStream(
  kc: KubeConfig,
  path: string,
  onText: (text: string) => void,
  signal: AbortSignal,
  onOpen: () => void = () => undefined,
): Promise<void> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const options: RequestOptions = { method: 'GET', headers: { accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const req = httpsRequest(new URL(path, cluster.server), options, (res) => {
      res.setEncoding('utf8');
      if ((res.statusCode ?? 0) >= 300) {
        let body = '';
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          reject(new ApiError('GET', path, res.statusCode ?? 0, body));
        });
        return;
      }
      onOpen();
      res.on('data', onText);
      res.on('error', () => undefined); // a reset surfaces as `close` without `complete`
      res.on('close', () => {
        if (res.complete || signal.aborted) resolve();
        else reject(new Error(`GET ${path}: the connection closed before the response ended`));
      });
    });
    signal.addEventListener('abort', () => req.destroy(), { once: true });
    req.on('error', (error) => {
      if (signal.aborted) resolve();
      else reject(error);
    });
    req.end();
  });
}

/** One JSON request with the kubeconfig's credentials and CA. */
export async function api<T = unknown>(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<T> {
  const text = await apiText(kc, method, path, body, contentType);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Whether GET `path` finds the object (404: false; any other failure throws). */
export async function objectExists(kc: KubeConfig, path: string): Promise<boolean> {
  try {
    await api(kc, 'GET', path);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  }
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
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData };
  try {
    await api(kc, 'POST', `/api/v1/namespaces/${namespace}/secrets`, secret);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
    await api(kc, 'PUT', `/api/v1/namespaces/${namespace}/secrets/${name}`, secret);
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
  const review = await api<{ status: { token: string } }>(
    admin,
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  const token = review.status.token;
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

/** What the ServiceAccount may do in `namespace`, asked as the ServiceAccount (SelfSubjectRulesReview). */
export async function effectiveRules(
  sa: KubeConfig,
  namespace: string,
): Promise<{ resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[]; incomplete: boolean }> {
  const review = await api<{
    status: { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[]; incomplete: boolean };
  }>(sa, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace },
  });
  return {
    resourceRules: normalizeRules(review.status.resourceRules),
    nonResourceRules: normalizeRules(review.status.nonResourceRules),
    incomplete: review.status.incomplete,
  };
}
