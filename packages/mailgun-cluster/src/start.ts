/**
 * What the mailgun-cluster process starts inside the runtime's `runController`: the Mailgun service,
 * the Kubernetes writer and the MailgunCluster and MailgunMachine controllers, one pair per watched
 * namespace scope. Apart from main.ts so that the crash tests' entry point starts the very same
 * process with their hook injected (`main.test-support.ts`).
 */
import type { ControllerRun } from '@loopwright/runtime';
import { RuntimeWriter } from './api.ts';
import type { program } from './config.ts';
import { createControllers, type ControllerSettings } from './controller.ts';
import { MailgunService } from './mailgun.ts';
import { createMailgunMetrics } from './metrics.ts';

export function start(
  { config, standard, manager, logger }: ControllerRun<(typeof program)['options']>,
  hooks: Pick<ControllerSettings, 'sendCheckpoint'> = {},
): void {
  logger.info('Mailgun', { domain: config.mailgunDomain, url: config.mailgunUrl });
  const kube = new RuntimeWriter(manager.client, manager.eventRecorder('loopwright.dev/mailgun-cluster'));
  const metrics = createMailgunMetrics(manager.metrics.registry);
  const mail = new MailgunService({
    domain: config.mailgunDomain,
    // Asked per request: a key file the kubelet updates is used without a restart.
    apiKey: () => config.mailgunApiKey.value(),
    url: config.mailgunUrl,
    timeoutMs: config.mailgunTimeout,
    metrics,
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
      metrics,
      ...hooks,
    }))
      manager.add(controller);
}
