/**
 * The controller's configuration, from environment variables, through one validated parser: the first
 * bad value throws {@link ConfigError} whose message is one line naming the variable and what it expects.
 * {@link VARIABLES} lists what the parser reads, for `--help`; its tests keep the two in step.
 */
import type { EnvVariable } from '@loopwright/runtime';

export const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  /** AT_NAMESPACES: namespaces to watch; undefined = all namespaces. */
  namespaces: string[] | undefined;
  /** AT_WORKERS: concurrent reconciles per watched namespace scope. */
  workers: number;
  /** AT_DEFAULT_IMAGE: image for Ats without spec.image. */
  defaultImage: string;
  /** LEADER_ELECT=false turns leader election off (one replica only!). */
  leaderElection: { namespace: string | undefined; leaseName: string } | undefined;
  /** HEALTH_PORT: /metrics, /healthz, /readyz. */
  healthPort: number;
  logLevel: LogLevel;
  logFormat: 'json' | 'console' | undefined;
  /** KUBE_API_QPS / KUBE_API_BURST: client-side rate limit of every API call. */
  rateLimit: { qps: number; burst: number };
  /** KUBECONFIG_CONTEXT: use this kubeconfig context instead of the current one. */
  context: string | undefined;
  /** POD_NAME (downward API): the Events' reportingInstance and the lease identity prefix. */
  podName: string | undefined;
}

export const DEFAULT_IMAGE = 'busybox:1.37.0';

/** Every variable {@link parseConfig} reads; a `default` behaves exactly like leaving it unset. */
export const VARIABLES: readonly EnvVariable[] = [
  { name: 'AT_NAMESPACES', description: 'comma-separated namespaces to watch; unset: all namespaces' },
  { name: 'AT_WORKERS', description: 'concurrent reconciles per watched namespace, 1..1000', default: '10' },
  {
    name: 'AT_DEFAULT_IMAGE',
    description: 'image for Ats without spec.image; needs /bin/sh',
    default: DEFAULT_IMAGE,
  },
  {
    name: 'LEADER_ELECT',
    description: 'false turns leader election off (one replica only!)',
    default: 'true',
  },
  {
    name: 'LEADER_ELECTION_NAMESPACE',
    description: "namespace of the Lease; unset: POD_NAMESPACE, else the kubeconfig context's",
  },
  { name: 'POD_NAMESPACE', description: "the pod's namespace (downward API), for the Lease" },
  { name: 'LEADER_ELECTION_LEASE_NAME', description: 'name of the Lease', default: 'at-scheduler' },
  { name: 'HEALTH_PORT', description: 'port of /metrics, /healthz and /readyz', default: '8080' },
  { name: 'LOG_LEVEL', description: LOG_LEVELS.join(', '), default: 'info' },
  { name: 'LOG_FORMAT', description: 'json or console; unset: console on a terminal, else json' },
  {
    name: 'KUBE_API_QPS',
    description: 'client-side limit of Kubernetes API requests per second',
    default: '20',
  },
  { name: 'KUBE_API_BURST', description: 'burst of that limit', default: '30' },
  { name: 'KUBECONFIG_CONTEXT', description: 'kubeconfig context to use instead of the current one' },
  {
    name: 'POD_NAME',
    description: "the pod's name (downward API): Events' reportingInstance, Lease identity",
  },
];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function parseConfig(env: Env = process.env): Config {
  const leaderElect = parseBoolean(env, 'LEADER_ELECT', true);
  const leaseNamespace = optional(env, 'LEADER_ELECTION_NAMESPACE') ?? optional(env, 'POD_NAMESPACE');
  if (leaseNamespace !== undefined)
    checkName(
      leaseNamespace,
      env.LEADER_ELECTION_NAMESPACE ? 'LEADER_ELECTION_NAMESPACE' : 'POD_NAMESPACE',
      DNS_LABEL,
      63,
    );
  const leaseName = optional(env, 'LEADER_ELECTION_LEASE_NAME') ?? 'at-scheduler';
  checkName(leaseName, 'LEADER_ELECTION_LEASE_NAME', DNS_SUBDOMAIN, 253);
  return {
    namespaces: parseNamespaces(env),
    workers: parseInteger(env, 'AT_WORKERS', 10, 1, 1000),
    defaultImage: parseImage(env),
    leaderElection: leaderElect ? { namespace: leaseNamespace, leaseName } : undefined,
    healthPort: parseInteger(env, 'HEALTH_PORT', 8080, 0, 65535),
    logLevel: parseEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: parseEnum(env, 'LOG_FORMAT', ['json', 'console'] as const, undefined),
    rateLimit: {
      qps: parseInteger(env, 'KUBE_API_QPS', 20, 1, 100_000),
      burst: parseInteger(env, 'KUBE_API_BURST', 30, 1, 100_000),
    },
    context: optional(env, 'KUBECONFIG_CONTEXT'),
    podName: optional(env, 'POD_NAME'),
  };
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function parseNamespaces(env: Env): string[] | undefined {
  const raw = optional(env, 'AT_NAMESPACES');
  if (raw === undefined) return undefined;
  const namespaces = [...new Set(raw.split(',').map((part) => part.trim()))];
  for (const namespace of namespaces)
    checkName(
      namespace,
      'AT_NAMESPACES',
      DNS_LABEL,
      63,
      'a comma-separated list of namespace names (empty = all namespaces)',
    );
  return namespaces;
}

function parseImage(env: Env): string {
  const image = optional(env, 'AT_DEFAULT_IMAGE') ?? DEFAULT_IMAGE;
  if (/\s/.test(image) || image.length > 1024)
    throw new ConfigError(
      `AT_DEFAULT_IMAGE: expected an image reference (e.g. ${DEFAULT_IMAGE}), got "${image}"`,
    );
  return image;
}

function parseInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new ConfigError(`${name}: expected an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

function parseBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name}: expected true or false, got "${env[name] ?? ''}"`);
}

function parseEnum<T extends string, D extends T | undefined>(
  env: Env,
  name: string,
  values: readonly T[],
  fallback: D,
): T | D {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if ((values as readonly string[]).includes(raw)) return raw as T;
  throw new ConfigError(`${name}: expected one of ${values.join(', ')}, got "${env[name] ?? ''}"`);
}

function checkName(
  value: string,
  name: string,
  pattern: RegExp,
  max: number,
  expected = `a DNS-1123 name of at most ${max} characters`,
): void {
  if (value.length === 0 || value.length > max || !pattern.test(value))
    throw new ConfigError(`${name}: expected ${expected}, got "${value}"`);
}
