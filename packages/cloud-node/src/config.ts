/**
 * The controller's configuration from the environment (HCCM's variable names, so users can switch) and a
 * few flags, through one validated parser: the first bad value throws {@link ConfigError}, one line naming
 * the variable and what it expects. `main.ts` prints it and exits 1. {@link VARIABLES} and {@link FLAGS}
 * list what the parser reads, for `--help`; its tests keep them in step.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_ENDPOINT } from '@loopwright/hcloud';
import type { EnvVariable, ValueFlag } from '@loopwright/runtime';
import type { AddressFamily } from './node-mapping.ts';

export const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  /** HCLOUD_TOKEN, or the trimmed content of HCLOUD_TOKEN_FILE. */
  token: string;
  /** Which variable the token came from (for messages; never the value). */
  tokenSource: 'HCLOUD_TOKEN' | 'HCLOUD_TOKEN_FILE';
  /** HCLOUD_ENDPOINT. */
  endpoint: string;
  /** HCLOUD_DEBUG: debug logs, including one line per Hetzner API request. */
  debug: boolean;
  /** HCLOUD_NETWORK: id or name of the private network whose IP becomes the InternalIP. */
  network: string | undefined;
  /** HCLOUD_INSTANCES_ADDRESS_FAMILY. */
  addressFamily: AddressFamily;
  /** HCLOUD_INSTANCES_ZONE_LABEL_ENABLED. */
  zoneLabels: boolean;
  /** --node-monitor-period / NODE_MONITOR_PERIOD: lifecycle checks of NotReady Nodes. */
  nodeMonitorPeriodMs: number;
  /** --node-status-update-frequency / NODE_STATUS_UPDATE_FREQUENCY: address refresh of initialised Nodes. */
  nodeStatusUpdateFrequencyMs: number;
  /** --node-selector / NODE_SELECTOR: only Nodes matching this label selector are touched. */
  nodeSelector: string | undefined;
  /** LEADER_ELECT=false turns leader election off (one replica only). */
  leaderElection: { namespace: string | undefined; leaseName: string } | undefined;
  /** HEALTH_PORT: /metrics, /healthz, /readyz. */
  healthPort: number;
  logLevel: LogLevel;
  logFormat: 'json' | 'console' | undefined;
  /** KUBE_API_QPS / KUBE_API_BURST. */
  kubeRateLimit: { qps: number; burst: number };
  /** KUBECONFIG_CONTEXT. */
  context: string | undefined;
  /** POD_NAME (downward API): Events' reportingInstance and the Lease identity. */
  podName: string | undefined;
  /** POD_NAMESPACE (downward API): with POD_NAME, where start-up Warning Events about this Pod go. */
  podNamespace: string | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** Every variable {@link parseConfig} reads; a `default` behaves exactly like leaving it unset. */
export const VARIABLES: readonly EnvVariable[] = [
  {
    name: 'HCLOUD_TOKEN',
    description: 'Hetzner Cloud API token (read-only suffices); required unless HCLOUD_TOKEN_FILE is set',
  },
  { name: 'HCLOUD_TOKEN_FILE', description: 'path of a file holding the token, instead of HCLOUD_TOKEN' },
  { name: 'HCLOUD_ENDPOINT', description: 'Hetzner Cloud API base URL', default: DEFAULT_ENDPOINT },
  {
    name: 'HCLOUD_NETWORK',
    description: "id or name of the private network whose IP is a Node's InternalIP",
  },
  {
    name: 'HCLOUD_INSTANCES_ADDRESS_FAMILY',
    description: "ipv4, ipv6 or dualstack: which of the server's public IPs are ExternalIPs",
    default: 'ipv4',
  },
  {
    name: 'HCLOUD_INSTANCES_ZONE_LABEL_ENABLED',
    description: 'false: no topology zone labels',
    default: 'true',
  },
  {
    name: 'HCLOUD_DEBUG',
    description: 'true: debug logs, one line per Hetzner API request',
    default: 'false',
  },
  {
    name: 'NODE_MONITOR_PERIOD',
    description: 'how often NotReady Nodes are checked against their server (Go duration)',
    default: '5s',
  },
  {
    name: 'NODE_STATUS_UPDATE_FREQUENCY',
    description: 'how often initialised Nodes get their addresses refreshed (Go duration)',
    default: '5m',
  },
  { name: 'NODE_SELECTOR', description: 'label selector: only matching Nodes are touched; unset: all Nodes' },
  {
    name: 'LEADER_ELECT',
    description: 'false turns leader election off (one replica only!)',
    default: 'true',
  },
  {
    name: 'LEADER_ELECTION_NAMESPACE',
    description: "namespace of the Lease; unset: POD_NAMESPACE, else the kubeconfig context's",
  },
  {
    name: 'POD_NAMESPACE',
    description: "the pod's namespace (downward API): the Lease's, and start-up Events about the pod",
  },
  { name: 'LEADER_ELECTION_LEASE_NAME', description: 'name of the Lease', default: 'cloud-node' },
  { name: 'HEALTH_PORT', description: 'port of /metrics, /healthz and /readyz', default: '8080' },
  { name: 'LOG_LEVEL', description: `${LOG_LEVELS.join(', ')}; unset: info, or debug with HCLOUD_DEBUG` },
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

const FLAG_VARIABLES = {
  '--node-monitor-period': 'NODE_MONITOR_PERIOD',
  '--node-status-update-frequency': 'NODE_STATUS_UPDATE_FREQUENCY',
  '--node-selector': 'NODE_SELECTOR',
} as const;
type FlagName = keyof typeof FLAG_VARIABLES;

/** The flags (HCCM's), each overriding its variable. */
export const FLAGS: readonly ValueFlag[] = Object.entries(FLAG_VARIABLES).map(([name, variable]) => ({
  name: name as FlagName,
  variable,
}));

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `flags`: the values of {@link FLAGS} given on the command line, by flag name (see `runCommandLine`). */
export function parseConfig(
  env: Env = process.env,
  flags: ReadonlyMap<string, string> = new Map(),
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): Config {
  const setting = (flag: FlagName): { name: string; raw: string | undefined } => {
    const value = flags.get(flag);
    return value === undefined
      ? { name: FLAG_VARIABLES[flag], raw: optional(env, FLAG_VARIABLES[flag]) }
      : { name: flag, raw: value.trim() };
  };

  const { token, tokenSource } = parseToken(env, readFile);
  const leaderElect = parseBoolean(env, 'LEADER_ELECT', true);
  const leaseNamespaceName = optional(env, 'LEADER_ELECTION_NAMESPACE')
    ? 'LEADER_ELECTION_NAMESPACE'
    : 'POD_NAMESPACE';
  const leaseNamespace = optional(env, leaseNamespaceName);
  if (leaseNamespace !== undefined) checkName(leaseNamespace, leaseNamespaceName, DNS_LABEL, 63);
  const leaseName = optional(env, 'LEADER_ELECTION_LEASE_NAME') ?? 'cloud-node';
  checkName(leaseName, 'LEADER_ELECTION_LEASE_NAME', DNS_SUBDOMAIN, 253);
  return {
    token,
    tokenSource,
    endpoint: parseEndpoint(env),
    debug: parseBoolean(env, 'HCLOUD_DEBUG', false),
    network: optional(env, 'HCLOUD_NETWORK'),
    addressFamily: parseEnum(
      env,
      'HCLOUD_INSTANCES_ADDRESS_FAMILY',
      ['ipv4', 'ipv6', 'dualstack'] as const,
      'ipv4',
    ),
    zoneLabels: parseBoolean(env, 'HCLOUD_INSTANCES_ZONE_LABEL_ENABLED', true),
    nodeMonitorPeriodMs: parseDurationSetting(setting('--node-monitor-period'), 5_000),
    nodeStatusUpdateFrequencyMs: parseDurationSetting(setting('--node-status-update-frequency'), 300_000),
    nodeSelector: parseSelector(setting('--node-selector')),
    leaderElection: leaderElect ? { namespace: leaseNamespace, leaseName } : undefined,
    healthPort: parseInteger(env, 'HEALTH_PORT', 8080, 0, 65535),
    logLevel:
      parseBoolean(env, 'HCLOUD_DEBUG', false) && !optional(env, 'LOG_LEVEL')
        ? 'debug'
        : parseEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: parseEnum(env, 'LOG_FORMAT', ['json', 'console'] as const, undefined),
    kubeRateLimit: {
      qps: parseInteger(env, 'KUBE_API_QPS', 20, 1, 100_000),
      burst: parseInteger(env, 'KUBE_API_BURST', 30, 1, 100_000),
    },
    context: optional(env, 'KUBECONFIG_CONTEXT'),
    podName: optional(env, 'POD_NAME'),
    podNamespace: optional(env, 'POD_NAMESPACE'),
  };
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function parseToken(
  env: Env,
  readFile: (path: string) => string,
): { token: string; tokenSource: Config['tokenSource'] } {
  const direct = optional(env, 'HCLOUD_TOKEN');
  const file = optional(env, 'HCLOUD_TOKEN_FILE');
  if (direct !== undefined && file !== undefined)
    throw new ConfigError('HCLOUD_TOKEN_FILE: set either HCLOUD_TOKEN or HCLOUD_TOKEN_FILE, not both');
  if (direct === undefined && file === undefined)
    throw new ConfigError(
      'HCLOUD_TOKEN: required (a Hetzner Cloud API token; or HCLOUD_TOKEN_FILE with a path to a file holding it)',
    );
  let token = direct;
  if (file !== undefined) {
    try {
      token = readFile(file).trim();
    } catch (error) {
      throw new ConfigError(
        `HCLOUD_TOKEN_FILE: cannot read "${file}": ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
    if (token === '') throw new ConfigError(`HCLOUD_TOKEN_FILE: "${file}" is empty`);
  }
  const source = file === undefined ? 'HCLOUD_TOKEN' : 'HCLOUD_TOKEN_FILE';
  // Never echo the value: it is a secret.
  if (token === undefined || /\s/.test(token))
    throw new ConfigError(`${source}: expected an API token without whitespace`);
  return { token, tokenSource: source };
}

function parseEndpoint(env: Env): string {
  const raw = optional(env, 'HCLOUD_ENDPOINT') ?? DEFAULT_ENDPOINT;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(
      `HCLOUD_ENDPOINT: expected an http(s) URL such as ${DEFAULT_ENDPOINT}, got "${raw}"`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError(
      `HCLOUD_ENDPOINT: expected an http(s) URL such as ${DEFAULT_ENDPOINT}, got "${raw}"`,
    );
  return raw.replace(/\/+$/, '');
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's `time.ParseDuration` subset Kubernetes flags use: `5s`, `300ms`, `1m30s`, `1h`. */
export function parseDuration(raw: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(raw)) return undefined;
  let total = 0;
  for (const [, amount = '0', unit = 's'] of raw.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g))
    total += Number(amount) * (DURATION_UNITS[unit] ?? 0);
  return Math.round(total);
}

function parseDurationSetting(
  { name, raw }: { name: string; raw: string | undefined },
  fallback: number,
): number {
  if (raw === undefined || raw === '') return fallback;
  const ms = parseDuration(raw);
  if (ms === undefined || ms < 10 || ms > 86_400_000)
    throw new ConfigError(`${name}: expected a duration from 10ms to 24h such as 5s or 5m, got "${raw}"`);
  return ms;
}

const SELECTOR_TERM =
  /^\s*(!?[A-Za-z0-9][-A-Za-z0-9_./]*)\s*(?:(==|=|!=)\s*([-A-Za-z0-9_.]*)|\s(in|notin)\s*\(\s*([-A-Za-z0-9_.]*(\s*,\s*[-A-Za-z0-9_.]*)*)\s*\))?\s*$/;

/** A Kubernetes label selector (equality and set based); passed to the API as the Nodes' list/watch filter. */
function parseSelector({ name, raw }: { name: string; raw: string | undefined }): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  // Split on commas outside parentheses.
  const terms = raw.split(/,(?![^(]*\))/);
  for (const term of terms) {
    const match = SELECTOR_TERM.exec(term);
    if (!match || (match[1]?.startsWith('!') === true && match[2] !== undefined))
      throw new ConfigError(
        `${name}: expected a label selector such as "node-role.kubernetes.io/worker" or "pool in (a,b),!legacy", got "${raw}"`,
      );
  }
  return raw;
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

function checkName(value: string, name: string, pattern: RegExp, max: number): void {
  if (value.length > max || !pattern.test(value))
    throw new ConfigError(`${name}: expected a DNS-1123 name of at most ${max} characters, got "${value}"`);
}
