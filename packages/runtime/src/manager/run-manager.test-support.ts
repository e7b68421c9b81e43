// Test fixture: a process whose main loop is runManager, with leader election on the Lease named by
// argv[2] in namespace argv[3]. Prints "leading" once it leads.
import { loadTestKubeConfig } from '@loopwright/envtest';
import { Controller } from '../controller/controller.ts';
import { createSilentLogger } from '../log/index.ts';
import { Manager, runManager } from './manager.ts';

const [leaseName = 'fixture', namespace = 'default'] = process.argv.slice(2);
const logger = createSilentLogger();
const manager = new Manager({
  kubeConfig: loadTestKubeConfig(),
  logger,
  health: false,
  leaderElection: {
    namespace,
    leaseName,
    identity: 'fixture',
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 400,
  },
});
manager.add(
  new Controller({
    name: 'announce',
    for: {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespace,
      fieldSelector: 'metadata.name=none',
    },
    reconcile: () => Promise.resolve(),
  }),
);
// leader_election_master_status turns 1 when this replica starts leading: tell the test.
const leading = manager.metrics.registry.getSingleMetric('leader_election_master_status');
const poll = setInterval(() => {
  void leading?.get().then((metric) => {
    if (metric.values.some((sample) => sample.value === 1)) {
      clearInterval(poll);
      process.stdout.write('leading\n');
    }
  });
}, 50);
await runManager(manager, logger);
