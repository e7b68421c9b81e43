/**
 * The mailgun-cluster process: the runtime's `runController` (options, logger, cluster, Manager with
 * leader election, health and metrics) around the MailgunCluster and MailgunMachine controllers, one
 * pair per watched namespace scope.
 */
import { runController } from '@loopwright/runtime';
import { program } from './config.ts';
import { RuntimeWriter } from './api.ts';
import { createControllers } from './controller.ts';
import { MailgunService } from './mailgun.ts';

await runController(program, ({ config, standard, manager, logger }) => {
  logger.info('Mailgun', { domain: config.mailgunDomain, url: config.mailgunUrl });
  const kube = new RuntimeWriter(manager.client, manager.eventRecorder('loopwright.dev/mailgun-cluster'));
  const mail = new MailgunService({
    domain: config.mailgunDomain,
    // Asked per request: a key file the kubelet updates is used without a restart.
    apiKey: () => config.mailgunApiKey.value(),
    url: config.mailgunUrl,
    timeoutMs: config.mailgunTimeout,
  });
  for (const namespace of standard.watchNamespace ?? [undefined])
    for (const controller of createControllers(manager.factory, {
      namespace,
      workers: standard.workers,
      mail,
      kube,
      recipient: config.mailRecipient,
      eventsSettleMs: config.eventsSettleTime,
      unauthorizedRetryMs: config.unauthorizedRetryDelay,
    }))
      manager.add(controller);
});
