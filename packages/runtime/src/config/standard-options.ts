/**
 * The options every controller has, under controller-runtime's and kube-controller-manager's flag
 * names; `runController` applies them (kubeconfig, leader election, servers, client rate limit, logging,
 * workers, namespace scope, the replica's identity), and sharding where a program offers it.
 */
import { LOG_FORMATS, LOG_LEVELS } from '../log/logger.ts';
import { ConfigError } from './config-error.ts';
import {
  bindAddress,
  boolean,
  dnsLabel,
  dnsSubdomain,
  duration,
  integer,
  labelValue,
  rateOrUnlimited,
  listOf,
  oneOf,
  text,
  type BindAddress,
} from './kinds.ts';
import { option, type OptionValues } from './option.ts';
import type { SetBy } from './resolve.ts';

/** What differs between controllers in the standard options. */
export interface StandardDefaults {
  /** The program's name: the default Lease name. */
  readonly name: string;
  /** The default of `--workers`. */
  readonly workers: number;
  /** The default of `--reconcile-timeout`, a Go duration (`0`: none); each controller says why in its README. */
  readonly reconcileTimeout: string;
  /**
   * Its controllers may run sharded (issue 39): it takes `--sharding` and `--sharding-ring`. Only where
   * a share of the objects is all a replica needs. Not cloud-node: every replica would call the Hetzner
   * API for its Nodes (its own sweeps of the servers), multiplying the calls on one account's rate limit.
   */
  readonly sharding?: true;
}

/**
 * The sharding options, after leader election's: membership reuses its namespace and durations (the
 * issue: member Leases renew "as leader election does, with the same durations"), so there are only two.
 */
function shardingOptions(name: string) {
  return {
    sharding: option(boolean, {
      flag: '--sharding',
      description:
        "every replica reconciles its share of the objects (hash ranges handed off through member Leases, in leader election's namespace, renewed with its durations); leader election is then off",
      default: 'false',
    }),
    shardingRing: option(labelValue, {
      flag: '--sharding-ring',
      description: "the ring's name, which labels its member Leases; replicas of one controller share it",
      default: name,
    }),
  } as const;
}

export function standardOptions({ name, workers, reconcileTimeout, sharding }: StandardDefaults) {
  return {
    kubeconfig: option(text({ placeholder: '<path>', expected: 'a path' }), {
      flag: '--kubeconfig',
      description: 'kubeconfig file; the variable may list several, ":"-separated, merged as kubectl does',
      unset: 'in a pod its service account, else ~/.kube/config',
    }),
    context: option(text({ placeholder: '<name>', expected: 'a kubeconfig context name' }), {
      flag: '--context',
      description: 'kubeconfig context to use',
      unset: "the kubeconfig's current-context",
    }),
    leaderElect: option(boolean, {
      flag: '--leader-elect',
      description: 'elect one active replica, the others wait as standbys; false: run one replica only',
      default: 'true',
    }),
    warmStandby: option(boolean, {
      flag: '--warm-standby',
      description:
        'a standby lists, watches and caches everything before it leads, so it takes over without a full list; false: it lists only once it wins (less memory while it waits)' +
        (sharding ? '; ignored with --sharding (no standbys)' : ''),
      default: 'true',
    }),
    leaderElectionNamespace: option(dnsLabel, {
      flag: '--leader-election-namespace',
      description: 'namespace of the Lease',
      unset: "--pod-namespace, else the kubeconfig context's",
    }),
    leaderElectionId: option(dnsSubdomain(), {
      flag: '--leader-election-id',
      description: 'name of the Lease the replicas share',
      default: name,
    }),
    leaseDuration: option(duration('1s', '1h'), {
      flag: '--leader-elect-lease-duration',
      description: 'how long standbys wait after the last renewal before taking over; whole seconds',
      default: '15s',
    }),
    renewDeadline: option(duration('1ms', '1h'), {
      flag: '--leader-elect-renew-deadline',
      description: 'how long the leader tries to renew before it stops leading (and exits)',
      default: '10s',
    }),
    retryPeriod: option(duration('1ms', '1h'), {
      flag: '--leader-elect-retry-period',
      description: 'how long to wait between attempts to acquire or renew the Lease',
      default: '2s',
    }),
    ...(sharding ? shardingOptions(name) : {}),
    healthProbeBindAddress: option(bindAddress, {
      flag: '--health-probe-bind-address',
      description: 'where /healthz and /readyz are served (with /metrics when the addresses are equal)',
      default: ':8081',
    }),
    metricsBindAddress: option(bindAddress, {
      flag: '--metrics-bind-address',
      description: 'where /metrics is served',
      default: ':8080',
    }),
    cacheDumpBindAddress: option(bindAddress, {
      flag: '--cache-dump-bind-address',
      description:
        "where GET /cache shows each informer's scope and its objects' names and resourceVersions, to compare with a fresh LIST (fault tests); 0: not served",
      default: '0',
    }),
    // No client-side limit by default, as controller-runtime since v0.21 on SIG API Machinery's advice:
    // the API server's flow control (APF: fair queuing per client, 429 + Retry-After, which the
    // transport honours) paces a burst, and a finite guess on the client became the limit itself
    // (500 qps held at-scheduler to 250 starts/s, two writes each, on a server sustaining more).
    // Reconcile retries stay bounded by the workqueue's rate limiter; a positive value restores a bucket.
    kubeApiQps: option(rateOrUnlimited(100_000), {
      flag: '--kube-api-qps',
      description:
        "client-side limit of Kubernetes API requests per second, per client; -1 leaves pacing to the API server's flow control (APF)",
      default: '-1',
    }),
    kubeApiBurst: option(integer(1, 100_000), {
      flag: '--kube-api-burst',
      description: 'burst of that limit (when it is set)',
      default: '1000',
    }),
    logLevel: option(oneOf(LOG_LEVELS), {
      flag: '--log-level',
      description: 'least severe level logged',
      default: 'info',
    }),
    logFormat: option(oneOf(LOG_FORMATS), {
      flag: '--log-format',
      description: 'JSON lines, or one readable line per entry',
      unset: 'console on a terminal, else json',
    }),
    workers: option(integer(1, 1000), {
      flag: '--workers',
      description: 'concurrent reconciles per controller (never two of one object)',
      default: String(workers),
    }),
    reconcileTimeout: option(duration('0s', '24h'), {
      flag: '--reconcile-timeout',
      description:
        "abort a reconcile's signal after this long and count it; the object is not reconciled again until that reconcile returns; 0: no limit",
      default: reconcileTimeout,
    }),
    podName: option(dnsSubdomain(128), {
      flag: '--pod-name',
      // 128: the limit of an Event's reportingInstance.
      description: "this replica's Pod (downward API): the Lease holder, Events' reportingInstance",
      unset: 'the hostname and a random UUID',
    }),
    podNamespace: option(dnsLabel, {
      flag: '--pod-namespace',
      description: "this replica's namespace (downward API)",
    }),
  } as const;
}

/** The namespace scope of a controller whose resources are namespaced. */
export const watchNamespaceOption = option(
  listOf(dnsLabel, 'namespace names (DNS-1123 labels), comma-separated'),
  {
    flag: '--watch-namespace',
    description: 'namespaces to watch: comma-separated, or the flag repeated',
    unset: 'all namespaces',
  },
);

export type StandardOptions = ReturnType<typeof standardOptions>;
export type StandardValues = OptionValues<StandardOptions>;

/** The relations client-go checks, and what one server per address needs; names what the user set. */
export function checkStandard(
  options: StandardOptions,
  values: StandardValues,
  setBy: SetBy<StandardOptions>,
): void {
  const { leaseDuration, renewDeadline, retryPeriod } = values;
  type Always = Exclude<keyof StandardOptions, keyof ReturnType<typeof shardingOptions>>;
  const name = (key: Always, other: Always = key): string => setBy[key] ?? setBy[other] ?? options[key].flag;
  if (leaseDuration % 1000 !== 0)
    throw new ConfigError(
      name('leaseDuration'),
      `expected whole seconds (the Lease stores seconds), got ${leaseDuration / 1000}s`,
    );
  if (leaseDuration <= renewDeadline)
    throw new ConfigError(
      name('renewDeadline', 'leaseDuration'),
      `the renew deadline (${renewDeadline} ms) must be shorter than the lease duration (${leaseDuration} ms)`,
    );
  // client-go's JitterFactor: an attempt may wait up to 1.2 retry periods.
  if (renewDeadline <= 1.2 * retryPeriod)
    throw new ConfigError(
      name('retryPeriod', 'renewDeadline'),
      `the renew deadline (${renewDeadline} ms) must exceed 1.2 retry periods (${1.2 * retryPeriod} ms)`,
    );
  if (values.sharding === true && values.leaderElect && setBy.leaderElect !== undefined)
    throw new ConfigError(
      // Both were set (sharding's default is false): name them as the user did.
      `${setBy.sharding ?? '--sharding'} and ${setBy.leaderElect}`,
      'sharding replaces leader election (every replica is active): leave --leader-elect unset or false',
    );
  const [probes, metrics] = [values.healthProbeBindAddress, values.metricsBindAddress];
  if (probes && metrics && probes.port === metrics.port && probes.port !== 0 && probes.host !== metrics.host)
    throw new ConfigError(
      name('metricsBindAddress', 'healthProbeBindAddress'),
      'the same port as the health probes needs the same host too (one server serves both)',
    );
}

/**
 * The values as they apply: sharded, leader election is off. Only a defaulted `--leader-elect` gets
 * here (one set to true is refused by {@link checkStandard}); `runController` logs that it turned off.
 */
export function applySharding<V extends StandardValues>(values: V): V {
  return values.sharding === true ? { ...values, leaderElect: false } : values;
}

/** True when probes and metrics share one server. */
export function sameAddress(a: BindAddress | false, b: BindAddress | false): boolean {
  return a !== false && b !== false && a.host === b.host && a.port === b.port;
}
