/**
 * The cloud-node process: `--help`/`--version` (exit before anything else), config from the environment
 * (HCCM's names) and flags, the token checked with one cheap API call (retried with backoff while the
 * API fails, unready meanwhile), then the runtime Manager (leader election, metrics, health) running the
 * Node and Node-lifecycle controllers until SIGTERM.
 * `pnpm nx serve cloud-node` runs it against the current kubeconfig context. A configuration error, or
 * one the API rejects (a 401 token, an unknown HCLOUD_NETWORK), is one line on stderr and exit status 1
 * (a bad argument: 2).
 */
import { HcloudClient } from '@loopwright/hcloud';
import { startHealthServer } from '@loopwright/metrics';
import {
  KUBE_CONFIG_VARIABLES,
  Manager,
  createLogger,
  describeContext,
  loadKubeConfig,
  registerSecret,
  runCommandLine,
  runManager,
  type ObjectReference,
} from '@loopwright/runtime';
import { RequestBudget } from './budget.ts';
import { ConfigError, FLAGS, VARIABLES, parseConfig, type Config } from './config.ts';
import { createCloudNodeControllers } from './controllers.ts';
import { createHcloudMetrics } from './hcloud-metrics.ts';
import { kubeNodeApi } from './kube-nodes.ts';
import { connectToHcloud, StartupError } from './hcloud-startup.ts';
import { HCLOUD_API_ERROR_REASON, REPORTING_CONTROLLER } from './names.ts';
import { ServerDirectory } from './server-directory.ts';

function fail(message: string): never {
  process.stderr.write(`${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
}

const flags = runCommandLine({
  packageJson: new URL('../package.json', import.meta.url),
  variables: [...VARIABLES, ...KUBE_CONFIG_VARIABLES],
  flags: FLAGS,
});

function loadConfig(): Config {
  try {
    return parseConfig(process.env, flags);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

const config = loadConfig();
registerSecret(config.token);
const logger = createLogger({
  level: config.logLevel,
  ...(config.logFormat ? { format: config.logFormat } : {}),
  defaultMeta: { app: 'cloud-node' },
});

const kubeConfig = (() => {
  try {
    return loadKubeConfig(config.context ? { context: config.context } : {});
  } catch (error) {
    fail((error as Error).message);
  }
})();
const context = describeContext(kubeConfig);
logger.info('target cluster', {
  context: context.context,
  server: context.server,
  user: context.user,
  source: context.source,
  nodes: config.nodeSelector ?? 'all',
});

const manager = new Manager({
  kubeConfig,
  logger,
  health: { port: config.healthPort },
  rateLimit: config.kubeRateLimit,
  ...(config.podName ? { identity: config.podName } : {}),
  ...(config.leaderElection
    ? {
        leaderElection: {
          namespace: config.leaderElection.namespace ?? context.namespace,
          leaseName: config.leaderElection.leaseName,
        },
      }
    : {}),
});

const hcloudMetrics = createHcloudMetrics(manager.metrics.registry);
const hcloudLogger = config.debug ? { logger: logger.child({ component: 'hcloud' }) } : {};
const hcloud = new HcloudClient({
  token: config.token,
  endpoint: config.endpoint,
  metrics: hcloudMetrics,
  // A lookup waiting long on a 429 would hold a worker; the budget avoids 429s, so waits stay short.
  maxRateLimitWaitMs: 10_000,
  ...hcloudLogger,
});
// One request per start-up attempt (no retries, no silent 429 waits): waitForHcloud's loop is the retry,
// so each failure is logged and reported at once.
const startupClient = new HcloudClient({
  token: config.token,
  endpoint: config.endpoint,
  metrics: hcloudMetrics,
  maxRetries: 0,
  maxRateLimitWaitMs: 0,
  ...hcloudLogger,
});
const recorder = manager.eventRecorder(REPORTING_CONTROLLER);
const networkId = await waitForHcloud();

const directory = new ServerDirectory({
  client: hcloud,
  // Until the controllers' first answer, the start-up check's is the freshest word on the bucket.
  budget: new RequestBudget({ rateLimit: () => hcloud.rateLimit ?? startupClient.rateLimit }),
  logger: logger.child({ component: 'server-directory' }),
});
for (const controller of createCloudNodeControllers({
  directory,
  nodes: kubeNodeApi(manager.client),
  recorder,
  addressFamily: config.addressFamily,
  networkId,
  zoneLabels: config.zoneLabels,
  nodeMonitorPeriodMs: config.nodeMonitorPeriodMs,
  nodeStatusUpdateFrequencyMs: config.nodeStatusUpdateFrequencyMs,
  nodeSelector: config.nodeSelector,
}))
  manager.add(controller);

await runManager(manager, logger);

/**
 * Start-up's API calls, retried with backoff while the API fails transiently (see hcloud-startup.ts):
 * meanwhile /healthz is ok and /readyz is not (an interim health server on the same port, until the
 * Manager serves its own), each failed attempt is one log line and a Warning Event on this Pod, and
 * SIGTERM exits 0. A rejected configuration exits 1 with one line naming it. Resolves HCLOUD_NETWORK's id.
 */
async function waitForHcloud(): Promise<number | undefined> {
  let lastFailure = 'no answer from the Hetzner Cloud API yet';
  const health = await startHealthServer({
    port: config.healthPort,
    registry: manager.metrics.registry,
    isReady: () => false,
    checks: {
      readyz: {
        'hcloud-api': () => {
          throw new Error(lastFailure);
        },
      },
    },
  }).catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
  logger.info('serving /metrics, /healthz and /readyz (not ready) until the Hetzner Cloud API answers', {
    port: health.port,
  });
  const stopping = new AbortController();
  const stop = (): void => {
    stopping.abort();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const pod = podReference();
  try {
    const result = await connectToHcloud({
      client: startupClient,
      tokenSource: config.tokenSource,
      network: config.network,
      signal: stopping.signal,
      onRetry: ({ step, error, attempt, retryInMs }) => {
        lastFailure = `cannot ${step}: ${error.message}`;
        logger.warn('Hetzner Cloud API not usable at start-up; not ready, retrying', {
          step,
          status: error.status,
          code: error.code,
          error: error.message,
          attempt,
          retryInMs,
        });
        // A stable note (no attempt count or delay), so repeats become one Event's series count.
        if (pod)
          recorder.event(pod, {
            type: 'Warning',
            reason: HCLOUD_API_ERROR_REASON,
            action: 'Start',
            note: `cannot ${step} at ${config.endpoint}: ${error.message}; not ready, retrying with backoff`,
          });
      },
    });
    if (result.kind === 'stopped') {
      logger.info('shutting down during start-up');
      await recorder.close();
      process.exit(0);
    }
    logger.info('Hetzner Cloud API ready', {
      endpoint: config.endpoint,
      network: result.networkId,
      rateLimitRemaining: startupClient.rateLimit?.remaining,
    });
    return result.networkId;
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    await recorder.close();
    fail(error.message);
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    await health.close();
  }
}

/** This process's Pod, which start-up Events are about; unknown outside a pod (no downward API). */
function podReference(): ObjectReference | undefined {
  if (config.podName === undefined || config.podNamespace === undefined) return undefined;
  return { apiVersion: 'v1', kind: 'Pod', namespace: config.podNamespace, name: config.podName };
}
