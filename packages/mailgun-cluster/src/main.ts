/**
 * The controller process: `--help`/`--version` (exit before anything else), config from the environment
 * (exit 1 with one line naming a bad variable), then a Manager running the MailgunCluster and
 * MailgunMachine controllers until SIGTERM.
 */
import {
  createLogger,
  describeContext,
  KUBE_CONFIG_VARIABLES,
  KubeConfigError,
  loadKubeConfig,
  Manager,
  registerSecret,
  runCommandLine,
  runManager,
} from '@loopwright/runtime';
import { ConfigError, parseConfig, VARIABLES, type Config } from './config.ts';
import { createControllers } from './controllers.ts';
import { RuntimeWriter } from './kube.ts';
import { MailgunService } from './mailgun.ts';

runCommandLine({
  packageJson: new URL('../package.json', import.meta.url),
  variables: [...VARIABLES, ...KUBE_CONFIG_VARIABLES],
});

let config: Config;
try {
  config = parseConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`mailgun-cluster: invalid configuration: ${error.message}\n`);
  process.exit(1);
}

// The key, and the Basic credential mailgun.js builds from it, must never reach a log line or an Event.
registerSecret(config.mailgun.apiKey);
registerSecret(Buffer.from(`api:${config.mailgun.apiKey}`).toString('base64'));
const logger = createLogger({
  level: config.logLevel,
  ...(config.logFormat ? { format: config.logFormat } : {}),
});
const kubeConfig = (() => {
  try {
    return loadKubeConfig();
  } catch (error) {
    if (!(error instanceof KubeConfigError)) throw error;
    process.stderr.write(`mailgun-cluster: ${error.message}\n`);
    process.exit(1);
  }
})();

const manager = new Manager({
  kubeConfig,
  logger,
  health: { port: config.healthPort },
  identity: config.instance,
  ...(config.leaderElection ? { leaderElection: config.leaderElection } : {}),
});
const kube = new RuntimeWriter(manager.client, manager.eventRecorder('loopwright.dev/mailgun-cluster'));
const mail = new MailgunService(config.mailgun);
for (const controller of createControllers(manager.factory, {
  namespace: config.watchNamespace,
  workers: config.workers,
  mail,
  kube,
  recipient: config.recipient,
  eventsSettleMs: config.mailgun.eventsSettleMs,
  unauthorizedRetryMs: config.unauthorizedRetryMs,
})) {
  manager.add(controller);
}
const context = describeContext(kubeConfig);
logger.info('starting mailgun-cluster', {
  context: context.context,
  server: context.server,
  domain: config.mailgun.domain,
  url: config.mailgun.url,
  namespace: config.watchNamespace ?? '(all)',
  leaderElection: config.leaderElection !== undefined,
});
await runManager(manager, logger);
