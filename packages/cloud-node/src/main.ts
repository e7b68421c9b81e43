/**
 * The cloud-node process: `--help`/`--version` (exit before anything else), config from the environment
 * (HCCM's names) and flags, the token checked with one cheap API call, then the runtime Manager (leader
 * election, metrics, health) running the Node and Node-lifecycle controllers until SIGTERM.
 * `pnpm nx serve cloud-node` runs it against the current kubeconfig context. Every start-up failure is
 * one line on stderr and exit status 1 (a bad argument: 2).
 */
import { HcloudClient, HcloudError, isUnauthorized } from '@loopwright/hcloud';
import {
  KUBE_CONFIG_VARIABLES,
  Manager,
  createLogger,
  describeContext,
  loadKubeConfig,
  registerSecret,
  runCommandLine,
  runManager,
} from '@loopwright/runtime';
import { RequestBudget } from './budget.ts';
import { ConfigError, FLAGS, VARIABLES, parseConfig, type Config } from './config.ts';
import { createCloudNodeControllers } from './controllers.ts';
import { createHcloudMetrics } from './hcloud-metrics.ts';
import { kubeNodeApi } from './kube-nodes.ts';
import { REPORTING_CONTROLLER } from './names.ts';
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

const hcloud = new HcloudClient({
  token: config.token,
  endpoint: config.endpoint,
  metrics: createHcloudMetrics(manager.metrics.registry),
  // A lookup waiting long on a 429 would hold a worker; the budget avoids 429s, so waits stay short.
  maxRateLimitWaitMs: 10_000,
  ...(config.debug ? { logger: logger.child({ component: 'hcloud' }) } : {}),
});

try {
  await hcloud.validateToken();
} catch (error) {
  if (error instanceof HcloudError && isUnauthorized(error)) fail(`${config.tokenSource}: ${error.message}`);
  fail(
    `HCLOUD_ENDPOINT: cannot check the token at ${config.endpoint}: ${error instanceof Error ? error.message : String(error)}`,
  );
}

let networkId: number | undefined;
if (config.network !== undefined) {
  const network = await hcloud
    .getNetwork(config.network)
    .catch((error: unknown) =>
      fail(
        `HCLOUD_NETWORK: cannot look up "${config.network ?? ''}": ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  if (network === null)
    fail(`HCLOUD_NETWORK: no network with id or name "${config.network}" in this project`);
  networkId = network.id;
}
logger.info('Hetzner Cloud API ready', {
  endpoint: config.endpoint,
  network: networkId,
  rateLimitRemaining: hcloud.rateLimit?.remaining,
});

const directory = new ServerDirectory({
  client: hcloud,
  budget: new RequestBudget({ rateLimit: () => hcloud.rateLimit }),
  logger: logger.child({ component: 'server-directory' }),
});
for (const controller of createCloudNodeControllers({
  directory,
  nodes: kubeNodeApi(manager.client),
  recorder: manager.eventRecorder(REPORTING_CONTROLLER),
  addressFamily: config.addressFamily,
  networkId,
  zoneLabels: config.zoneLabels,
  nodeMonitorPeriodMs: config.nodeMonitorPeriodMs,
  nodeStatusUpdateFrequencyMs: config.nodeStatusUpdateFrequencyMs,
  nodeSelector: config.nodeSelector,
}))
  manager.add(controller);

await runManager(manager, logger);
