/**
 * The at-scheduler process: the runtime's `runController` (options, logger, cluster, Manager with
 * leader election, health and metrics) around the At controllers, one per watched namespace scope.
 * `pnpm nx serve at-scheduler` runs this against the current kubeconfig context.
 */
import { runController } from '@loopwright/runtime';
import { kubeAtApi } from './api.ts';
import { program } from './config.ts';
import { CONTROLLER_NAME, createAtControllers } from './controller.ts';
import { createAtMetrics } from './metrics.ts';

await runController(program, ({ config, standard, manager }) => {
  for (const controller of createAtControllers({
    manager,
    api: kubeAtApi(manager.client),
    recorder: manager.eventRecorder(`loopwright.dev/${CONTROLLER_NAME}`),
    namespaces: standard.watchNamespace,
    workers: standard.workers,
    defaultImage: config.defaultImage,
    metrics: createAtMetrics(manager.metrics.registry),
  }))
    manager.add(controller);
});
