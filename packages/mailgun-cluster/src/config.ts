/**
 * The controller's configuration, from the environment, validated in one place. A missing or malformed
 * variable is a {@link ConfigError} naming it; `main.ts` prints that one line and exits 1.
 * {@link VARIABLES} lists what the parser reads, for `--help`; its tests keep the two in step.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { LOG_LEVELS, type EnvVariable, type LogFormat, type LogLevel } from '@loopwright/runtime';

export interface Config {
  mailgun: {
    domain: string;
    /** Never logged: main.ts registers it with the log redaction before anything else runs. */
    apiKey: string;
    /** Base URL without `/v3`: `https://api.mailgun.net` (US), `https://api.eu.mailgun.net` (EU), a mock in tests. */
    url: string;
    /** Per-request client timeout. */
    timeoutMs: number;
    /**
     * How long after a send attempt started an absent `accepted` event is taken as proof that Mailgun
     * never accepted the mail (Mailgun's events arrive late). Always longer than the timeout.
     */
    eventsSettleMs: number;
  };
  /** Every request mail goes to this address. */
  recipient: string;
  /** Empty: all namespaces. */
  watchNamespace: string | undefined;
  workers: number;
  healthPort: number;
  /** undefined: no leader election (one replica only). */
  leaderElection: { namespace: string; leaseName: string } | undefined;
  /** `reportingInstance` of Events: tells replicas apart. */
  instance: string;
  /** After a 401 the next attempt waits this long: an operator has to fix the key first. */
  unauthorizedRetryMs: number;
  logLevel: LogLevel;
  /** undefined: the logger decides (console on a terminal, else JSON). */
  logFormat: LogFormat | undefined;
}

const DEFAULT_URL = 'https://api.mailgun.net';

/** Every variable {@link parseConfig} reads; a `default` behaves exactly like leaving it unset. */
export const VARIABLES: readonly EnvVariable[] = [
  { name: 'MAILGUN_DOMAIN', description: 'Mailgun sending domain, e.g. mg.example.com; required' },
  {
    name: 'MAILGUN_API_KEY',
    description: 'Mailgun sending API key (never logged); required unless MAILGUN_API_KEY_FILE is set',
  },
  {
    name: 'MAILGUN_API_KEY_FILE',
    description: 'path of a file holding the API key, instead of MAILGUN_API_KEY',
  },
  { name: 'MAIL_RECIPIENT', description: 'the address every request mail goes to; required' },
  {
    name: 'MAILGUN_URL',
    description: 'Mailgun API base URL without /v3; EU accounts: https://api.eu.mailgun.net',
    default: DEFAULT_URL,
  },
  { name: 'MAILGUN_TIMEOUT_SECONDS', description: 'per-request client timeout, 1..600', default: '30' },
  {
    name: 'MAILGUN_EVENTS_SETTLE_SECONDS',
    description: 'after a send attempt, when a missing "accepted" event means never sent; > the timeout',
    default: '1800',
  },
  {
    name: 'MAILGUN_UNAUTHORIZED_RETRY_SECONDS',
    description: 'wait after a 401 before trying again, 1..86400',
    default: '300',
  },
  { name: 'WATCH_NAMESPACE', description: 'the one namespace to watch; unset: all namespaces' },
  { name: 'WORKERS', description: 'concurrent reconciles per controller, 1..64', default: '1' },
  { name: 'HEALTH_PORT', description: 'port of /metrics, /healthz and /readyz', default: '8080' },
  {
    name: 'LEADER_ELECTION',
    description: 'false turns leader election off (one replica only!)',
    default: 'true',
  },
  {
    name: 'LEADER_ELECTION_NAMESPACE',
    description: 'namespace of the Lease; unset: POD_NAMESPACE (one is required with leader election)',
  },
  { name: 'POD_NAMESPACE', description: "the pod's namespace (downward API), for the Lease" },
  { name: 'LEADER_ELECTION_ID', description: 'name of the Lease', default: 'mailgun-cluster-controller' },
  {
    name: 'POD_NAME',
    description: "the pod's name (downward API): Events' reportingInstance, Lease identity; unset: hostname",
  },
  { name: 'LOG_LEVEL', description: LOG_LEVELS.join(', '), default: 'info' },
  { name: 'LOG_FORMAT', description: 'json or console; unset: console on a terminal, else json' },
];

/** One variable is missing or malformed; the message names it and says what is expected. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly variable: string;
  constructor(variable: string, expected: string) {
    super(`${variable}: ${expected}`);
    this.variable = variable;
  }
}

/** A pragmatic address check; the CRD validates requesters the same way. */
const emailPattern = /^[^@\s<>"]+@[^@\s<>"]+\.[^@\s<>"]+$/;
const domainPattern = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
const dns1123Label = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw === '' ? undefined : raw;
  };
  const required = (name: string, expected: string): string => {
    const raw = value(name);
    if (raw === undefined) throw new ConfigError(name, `required: ${expected}`);
    return raw;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
  const oneOf = <T extends string>(name: string, values: readonly T[]): T | undefined => {
    const raw = value(name)?.toLowerCase();
    if (raw === undefined) return undefined;
    if (!(values as readonly string[]).includes(raw))
      throw new ConfigError(name, `expected one of ${values.join(', ')}, got "${env[name] ?? ''}"`);
    return raw as T;
  };

  const domain = required('MAILGUN_DOMAIN', 'the Mailgun sending domain, e.g. mg.example.com');
  if (!domainPattern.test(domain))
    throw new ConfigError('MAILGUN_DOMAIN', `expected a domain name, e.g. mg.example.com, got "${domain}"`);

  const apiKey = readApiKey(value('MAILGUN_API_KEY'), value('MAILGUN_API_KEY_FILE'));

  const recipient = required('MAIL_RECIPIENT', 'the email address that receives the requests');
  if (!emailPattern.test(recipient))
    throw new ConfigError('MAIL_RECIPIENT', `expected an email address, got "${recipient}"`);

  const url = value('MAILGUN_URL') ?? DEFAULT_URL;
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new ConfigError(
      'MAILGUN_URL',
      `expected an http(s) URL such as https://api.eu.mailgun.net, got "${url}"`,
    );
  }
  if (parsedUrl.protocol !== 'https:' && parsedUrl.protocol !== 'http:') {
    throw new ConfigError(
      'MAILGUN_URL',
      `expected an http(s) URL such as https://api.eu.mailgun.net, got "${url}"`,
    );
  }

  const timeoutMs = integer('MAILGUN_TIMEOUT_SECONDS', 30, 1, 600) * 1000;
  // Mailgun recommends treating events younger than half an hour as possibly incomplete.
  const eventsSettleMs = integer('MAILGUN_EVENTS_SETTLE_SECONDS', 1800, 1, 7 * 24 * 3600) * 1000;
  if (eventsSettleMs <= timeoutMs) {
    throw new ConfigError(
      'MAILGUN_EVENTS_SETTLE_SECONDS',
      `must exceed MAILGUN_TIMEOUT_SECONDS (${timeoutMs / 1000}): a send still in flight must never look lost`,
    );
  }

  const watchNamespace = value('WATCH_NAMESPACE');
  if (watchNamespace !== undefined && !dns1123Label.test(watchNamespace)) {
    throw new ConfigError(
      'WATCH_NAMESPACE',
      `expected one namespace name (or unset for all), got "${watchNamespace}"`,
    );
  }

  const leaderElectionRaw = (value('LEADER_ELECTION') ?? 'true').toLowerCase();
  if (leaderElectionRaw !== 'true' && leaderElectionRaw !== 'false') {
    throw new ConfigError('LEADER_ELECTION', `expected true or false, got "${leaderElectionRaw}"`);
  }
  let leaderElection: Config['leaderElection'];
  if (leaderElectionRaw === 'true') {
    const namespace = value('LEADER_ELECTION_NAMESPACE') ?? value('POD_NAMESPACE');
    if (namespace === undefined)
      throw new ConfigError(
        'LEADER_ELECTION_NAMESPACE',
        'required when LEADER_ELECTION is true (or set POD_NAMESPACE)',
      );
    if (!dns1123Label.test(namespace))
      throw new ConfigError('LEADER_ELECTION_NAMESPACE', `expected a namespace name, got "${namespace}"`);
    leaderElection = { namespace, leaseName: value('LEADER_ELECTION_ID') ?? 'mailgun-cluster-controller' };
  }

  return {
    mailgun: { domain, apiKey, url: url.replace(/\/+$/, ''), timeoutMs, eventsSettleMs },
    recipient,
    watchNamespace,
    workers: integer('WORKERS', 1, 1, 64),
    healthPort: integer('HEALTH_PORT', 8080, 0, 65535),
    leaderElection,
    instance: value('POD_NAME') ?? hostname(),
    unauthorizedRetryMs: integer('MAILGUN_UNAUTHORIZED_RETRY_SECONDS', 300, 1, 86_400) * 1000,
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS) ?? 'info',
    logFormat: oneOf('LOG_FORMAT', ['json', 'console'] as const),
  };
}

function readApiKey(direct: string | undefined, file: string | undefined): string {
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError(
      'MAILGUN_API_KEY_FILE',
      'set either MAILGUN_API_KEY or MAILGUN_API_KEY_FILE, not both',
    );
  }
  if (file !== undefined) {
    let contents: string;
    try {
      contents = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new ConfigError(
        'MAILGUN_API_KEY_FILE',
        `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    if (contents === '') throw new ConfigError('MAILGUN_API_KEY_FILE', `${file} is empty`);
    return contents;
  }
  if (direct === undefined)
    throw new ConfigError('MAILGUN_API_KEY', 'required (or MAILGUN_API_KEY_FILE): a Mailgun sending API key');
  return direct;
}
