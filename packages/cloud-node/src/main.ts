/**
 * The cloud-node process: the runtime's `runController` (options, logger, cluster, Manager with leader
 * election, health and metrics) around the Node and Node-lifecycle controllers. Before they start, the
 * token is checked with one cheap API call, retried with backoff while the API fails (unready meanwhile,
 * a Warning Event on this Pod per failure); a value the API rejects (a 401 token, an endpoint that is
 * not the API, a network it does not know) is a bad value like a malformed one: one line on stderr
 * naming it as set, exit 2. `pnpm nx serve cloud-node` runs it against the current kubeconfig context.
 */
import { realClock } from '@loopwright/core';
import { HcloudClient } from '@loopwright/hcloud';
import {
  ConfigError,
  nameAsSet,
  runController,
  type ControllerRun,
  type EventRecorder,
} from '@loopwright/runtime';
import { createNodeApi } from './api.ts';
import { RequestBudget } from './budget.ts';
import { program } from './config.ts';
import { createCloudNodeControllers, nodeCacheScope } from './controller.ts';
import { createHcloudMetrics } from './hcloud-metrics.ts';
import { connectToHcloud } from './hcloud-startup.ts';
import { registerNodeMetrics } from './metrics.ts';
import type { Node } from './node.ts';
import { REPORTING_CONTROLLER } from './names.ts';
import { EventReason } from './reasons.ts';
import { ServerDirectory } from './server-directory.ts';

type Run = ControllerRun<typeof program.options>;

await runController(program, async (run) => {
  const { config, standard, manager, logger } = run;
  logger.info('Hetzner Cloud', { endpoint: config.hcloudEndpoint, nodes: config.nodeSelector ?? 'all' });
  const hcloudMetrics = createHcloudMetrics(manager.metrics.registry);
  const common = {
    // Asked per request: a token file the kubelet updates is used without a restart.
    token: () => config.hcloudToken.value(),
    endpoint: config.hcloudEndpoint,
    metrics: hcloudMetrics,
    ...(config.hcloudDebug ? { logger: logger.child({ component: 'hcloud' }) } : {}),
  };
  // A lookup waiting long on a 429 would hold a worker; the budget avoids 429s, so waits stay short.
  const hcloud = new HcloudClient({ ...common, maxRateLimitWaitMs: 10_000 });
  // One request per start-up attempt (no retries, no silent 429 waits): waitForHcloud's loop is the
  // retry, so each failure is logged and reported at once.
  const startupClient = new HcloudClient({ ...common, maxRetries: 0, maxRateLimitWaitMs: 0 });
  const recorder = manager.eventRecorder(REPORTING_CONTROLLER);

  const networkId = await waitForHcloud(run, startupClient, recorder);
  if (networkId === 'stopped') return;
  const directory = new ServerDirectory({
    client: hcloud,
    // Until the controllers' first answer, the start-up check's is the freshest word on the bucket.
    budget: new RequestBudget({ rateLimit: () => hcloud.rateLimit ?? startupClient.rateLimit }),
    logger: logger.child({ component: 'server-directory' }),
  });
  for (const controller of createCloudNodeControllers({
    api: createNodeApi({ client: manager.client, recorder, directory }),
    addressFamily: config.addressFamily,
    networkId,
    zoneLabels: config.zoneLabels,
    nodeMonitorPeriodMs: config.nodeMonitorPeriod,
    nodeStatusUpdateFrequencyMs: config.nodeStatusUpdateFrequency,
    nodeSelector: config.nodeSelector,
    workers: standard.workers,
  }))
    manager.add(controller);
  registerNodeMetrics(manager.metrics.registry, {
    nodes: manager.factory.forResource<Node>(nodeCacheScope(config.nodeSelector)).lister,
    clock: realClock,
  });
});

/**
 * Start-up's API calls, retried with backoff while the API fails transiently (see hcloud-startup.ts):
 * meanwhile /healthz is ok and /readyz is not, each failed attempt is one log line and a Warning Event on
 * this Pod, and SIGTERM ends it (`stopped`). A rejected value is thrown as the `ConfigError` naming it
 * (runController: exit 2). Resolves the network's id.
 */
async function waitForHcloud(
  run: Run,
  client: HcloudClient,
  recorder: EventRecorder,
): Promise<number | undefined | 'stopped'> {
  const { config, standard, logger, setBy } = run;
  const { options } = program;
  let lastFailure = 'no answer from the Hetzner Cloud API yet';
  const probes = await run.serveStartupProbes({
    'hcloud-api': () => {
      throw new Error(lastFailure);
    },
  });
  const pod =
    standard.podName && standard.podNamespace
      ? { apiVersion: 'v1', kind: 'Pod', namespace: standard.podNamespace, name: standard.podName }
      : undefined;
  try {
    const result = await connectToHcloud({
      client,
      names: {
        token: config.hcloudToken.source,
        endpoint: nameAsSet(options.hcloudEndpoint, setBy.config.hcloudEndpoint),
        network: nameAsSet(options.hcloudNetwork, setBy.config.hcloudNetwork),
      },
      network: config.hcloudNetwork,
      signal: run.signal,
      onRetry: ({ step, error, attempt, retryAfterMs }) => {
        lastFailure = `cannot ${step}: ${error.message}`;
        logger.warn('Hetzner Cloud API not usable at start-up; not ready, retrying', {
          step,
          statusCode: error.status,
          code: error.code,
          error: error.message,
          attempt,
          retryAfterMs,
        });
        // A stable note (no attempt count or delay), so repeats become one Event's series count.
        if (pod)
          recorder.event(pod, {
            type: 'Warning',
            reason: EventReason.HcloudAPIError,
            action: 'Start',
            note: `cannot ${step} at ${config.hcloudEndpoint}: ${error.message}; not ready, retrying with backoff`,
          });
      },
    });
    if (result.kind === 'stopped') {
      await recorder.close();
      return 'stopped';
    }
    logger.info('Hetzner Cloud API ready', {
      network: result.networkId,
      rateLimitRemaining: client.rateLimit?.remaining,
    });
    return result.networkId;
  } catch (error) {
    if (error instanceof ConfigError) await recorder.close();
    throw error;
  } finally {
    await probes?.close();
  }
}
