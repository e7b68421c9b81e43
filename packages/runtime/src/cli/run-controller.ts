/**
 * A controller process's whole life around its own wiring, so that each `main.ts` is wiring only:
 *
 * 1. `--help` / `--version`: print, exit 0, before anything else;
 * 2. every option from flags and environment, validated: a bad one is one line on stderr, exit 2;
 * 3. the logger, the cluster (`--kubeconfig`, `--context`): a kubeconfig that does not exist or does not
 *    load, or a context it lacks or cannot use, is a bad value of the option that chose it: one line
 *    naming it as set, exit 2 (see kube-config-options.ts); then the Manager with leader election (or
 *    sharding, where the program offers it and `--sharding` asks for it), the client rate limit, health
 *    probes and metrics, this replica's identity;
 * 4. the controller's `start`, which adds its controllers (and may do start-up work of its own): a
 *    `ConfigError` it throws (a value that names what does not exist, such as cloud-node's network) is a
 *    bad value too (exit 2), any other failure exit 1;
 * 5. the Manager until SIGTERM/SIGINT (exit 0) or lost leadership and failures (exit 1).
 *
 * Exit 1 is left for what a correct configuration can meet: an API server that does not answer, a port
 * in use; what waits for an API to answer retries instead of exiting.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { HealthCheck, HealthServer } from '@loopwright/metrics';
import type { Logger } from 'winston';
import { ConfigError } from '../config/config-error.ts';
import { FileSecret } from '../config/file-secret.ts';
import { formatHelp } from '../config/help.ts';
import type { BindAddress } from '../config/kinds.ts';
import type { OptionSet } from '../config/option.ts';
import { parseProgram, type Configuration, type ControllerProgram } from '../config/program.ts';
import { sameAddress } from '../config/standard-options.ts';
import {
  KubeConfigError,
  describeContext,
  loadKubeConfig,
  type KubeContextDescription,
} from '@loopwright/client';
import { createLogger } from '../log/logger.ts';
import { startCacheDumpServer } from '../manager/cache-dump.ts';
import { Manager, runManager, shutdownSignal, type ManagerOptions } from '../manager/manager.ts';
import { startServers, type ServerAddress } from '../manager/servers.ts';
import { kubeConfigValueError, loadKubeConfigOptions } from './kube-config-options.ts';
import { readPackageInfo } from './package-info.ts';

/** What a controller's `start` gets: its configuration and everything built from it. */
export interface ControllerRun<O extends OptionSet> extends Configuration<O> {
  readonly logger: Logger;
  readonly kubeConfig: KubeConfig;
  readonly cluster: KubeContextDescription;
  /** Add the controllers here; it starts when `start` returns. */
  readonly manager: Manager;
  /** Aborted on SIGTERM or SIGINT. If it is when `start` returns, the process exits 0 at once. */
  readonly signal: AbortSignal;
  /**
   * For start-up work before the Manager runs: serves `/healthz` (ok) and `/readyz` (not ready, with
   * these named checks) at the probe address, and `/metrics` at the metrics address (the same server
   * when they share one), so what start-up counts is scraped while it waits. Close it before
   * returning: the Manager binds the same addresses.
   */
  serveStartupProbes(readyz: Readonly<Record<string, HealthCheck>>): Promise<HealthServer | undefined>;
  /**
   * A start-up failure: one line on stderr, exit 1. A value found wrong is not one: `start` throws a
   * `ConfigError` naming it as set (`run.setBy`), and the process exits 2.
   */
  fail(message: string): never;
}

export async function runController<O extends OptionSet>(
  program: ControllerProgram<O>,
  start: (run: ControllerRun<O>) => void | Promise<void>,
): Promise<never> {
  const env = process.env;
  const fail = (message: string, code = 1): never => {
    process.stderr.write(`${program.name}: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return process.exit(code);
  };
  const badValue = (error: ConfigError): never => fail(`${error.message} (see --help)`, 2);
  let parsed: ReturnType<typeof parseProgram<O>>;
  try {
    parsed = parseProgram(program, process.argv.slice(2), env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return badValue(error);
  }
  if (parsed.action === 'help' || parsed.action === 'version') {
    const info = { ...readPackageInfo(program.packageJson), name: program.name };
    process.stdout.write(
      parsed.action === 'help' ? formatHelp(program, info) : `${info.name} ${info.version}\n`,
    );
    return process.exit(0);
  }
  const { config, standard, setBy } = parsed;

  const logger = createLogger({
    level: standard.logLevel,
    ...(standard.logFormat ? { format: standard.logFormat } : {}),
    defaultMeta: { app: program.name },
  });
  for (const value of Object.values(config))
    if (value instanceof FileSecret)
      value.observe((reload) => {
        if (reload.outcome === 'reloaded') logger.info('secret file changed: using its new value', reload);
        else logger.warn('secret file changed but gives no value: keeping the previous one', reload);
      });

  let kubeConfig: KubeConfig;
  try {
    kubeConfig = loadKubeConfig(loadKubeConfigOptions(standard, setBy.standard, env));
  } catch (error) {
    if (!(error instanceof KubeConfigError)) throw error;
    return badValue(kubeConfigValueError(error, setBy.standard));
  }
  const cluster = describeContext(kubeConfig);
  logger.info('target cluster', {
    context: cluster.context,
    server: cluster.server,
    user: cluster.user,
    // How the credentials were found: says at once whether a pod used its ServiceAccount token.
    source: cluster.source,
    ...(program.namespaced ? { namespaces: standard.watchNamespace ?? 'all' } : {}),
  });

  const servers = serversOf(standard.healthProbeBindAddress, standard.metricsBindAddress);
  // The member Leases live where the leader-election Lease would, renewed with the same durations.
  const leases = {
    namespace: standard.leaderElectionNamespace ?? standard.podNamespace ?? cluster.namespace,
    leaseDurationMs: standard.leaseDuration,
    renewDeadlineMs: standard.renewDeadline,
    retryPeriodMs: standard.retryPeriod,
  };
  // parseProgram turned a defaulted --leader-elect off (one set to true is refused): say so once.
  if (standard.sharding === true && setBy.standard.leaderElect === undefined)
    logger.info(
      'sharded (--sharding): leader election is off, every replica is active; --warm-standby is ignored',
    );
  const manager = new Manager({
    kubeConfig,
    logger,
    ...servers,
    rateLimit: clientRateLimit(standard),
    fieldManager: program.name,
    reconcileTimeoutMs: standard.reconcileTimeout,
    warmStandby: standard.warmStandby,
    ...(standard.podName ? { identity: standard.podName } : {}),
    ...(standard.sharding === true && standard.shardingRing !== undefined
      ? { sharding: { ...leases, ring: standard.shardingRing } }
      : standard.leaderElect
        ? { leaderElection: { ...leases, leaseName: standard.leaderElectionId } }
        : {}),
  });
  const signal = shutdownSignal(logger);
  const { cacheDumpBindAddress: dump } = standard;
  if (dump) {
    // Lives as long as the process: it shows the caches at any moment, shutdown included.
    const server = await startCacheDumpServer(
      { port: dump.port, ...(dump.host === undefined ? {} : { host: dump.host }) },
      manager.factory,
    ).catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
    logger.info('serving GET /cache (--cache-dump-bind-address)', { port: server.port });
  }
  const run: ControllerRun<O> = {
    ...parsed,
    logger,
    kubeConfig,
    cluster,
    manager,
    signal,
    fail: (message) => fail(message),
    serveStartupProbes: async (readyz) => {
      const started = await startServers(servers, {
        registry: manager.metrics.registry,
        isReady: () => false,
        checks: { readyz },
      }).catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
      if (started.probes) {
        logger.info('serving /healthz and /readyz (not ready) during start-up', {
          port: started.probes.port,
        });
      }
      if (started.metrics) logger.info('serving /metrics during start-up', { port: started.metrics.port });
      const first = started.probes ?? started.metrics;
      return first === undefined ? undefined : { port: first.port, close: () => started.close() };
    },
  };
  try {
    await start(run);
  } catch (error) {
    if (error instanceof ConfigError) return badValue(error);
    logger.error('start-up failed', { error });
    return process.exit(1);
  }
  if (signal.aborted) {
    logger.info('shut down during start-up');
    return process.exit(0);
  }
  return runManager(manager, logger, signal);
}

/** The Manager's servers: one for everything when probes and metrics share an address, else two. */
function serversOf(
  probes: BindAddress | false,
  metrics: BindAddress | false,
): Pick<ManagerOptions, 'health' | 'metricsServer'> & { health: ServerAddress } {
  const address = (bind: BindAddress | false): ServerAddress =>
    bind && { port: bind.port, ...(bind.host === undefined ? {} : { host: bind.host }) };
  return sameAddress(probes, metrics)
    ? { health: address(probes) }
    : { health: address(probes), metricsServer: address(metrics) };
}

/** `--kube-api-qps` -1 is no client-side limiter; a positive value a token bucket with `--kube-api-burst`. */
export function clientRateLimit(standard: {
  kubeApiQps: number;
  kubeApiBurst: number;
}): { qps: number; burst: number } | false {
  return standard.kubeApiQps < 0 ? false : { qps: standard.kubeApiQps, burst: standard.kubeApiBurst };
}
