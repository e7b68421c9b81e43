/**
 * The at-scheduler process: `--help`/`--version` (exit before anything else), config from the
 * environment, the cluster from the kubeconfig precedence (flag, KUBECONFIG, in-cluster,
 * ~/.kube/config), then the runtime Manager with leader election, metrics and health until SIGTERM.
 * `pnpm nx serve at-scheduler` runs this against the current context.
 */
import {
  KUBE_CONFIG_VARIABLES,
  Manager,
  createLogger,
  describeContext,
  loadKubeConfig,
  runCommandLine,
  runManager,
} from '@loopwright/runtime';
import { kubeAtApi } from './api.ts';
import { ConfigError, VARIABLES, parseConfig, type Config } from './config.ts';
import { CONTROLLER_NAME, createAtControllers } from './controller.ts';

runCommandLine({
  packageJson: new URL('../package.json', import.meta.url),
  variables: [...VARIABLES, ...KUBE_CONFIG_VARIABLES],
});

function loadConfig(): Config {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const config = loadConfig();
const logger = createLogger({
  level: config.logLevel,
  ...(config.logFormat ? { format: config.logFormat } : {}),
  defaultMeta: { app: CONTROLLER_NAME },
});
const kubeConfig = (() => {
  try {
    return loadKubeConfig(config.context ? { context: config.context } : {});
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
})();
const context = describeContext(kubeConfig);
logger.info('target cluster', {
  context: context.context,
  server: context.server,
  user: context.user,
  namespaces: config.namespaces ?? 'all',
});

const manager = new Manager({
  kubeConfig,
  logger,
  health: { port: config.healthPort },
  rateLimit: config.rateLimit,
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
const recorder = manager.eventRecorder(`loopwright.dev/${CONTROLLER_NAME}`);
for (const controller of createAtControllers({
  manager,
  api: kubeAtApi(manager.client),
  recorder,
  namespaces: config.namespaces,
  workers: config.workers,
  defaultImage: config.defaultImage,
})) {
  manager.add(controller);
}
await runManager(manager, logger);
