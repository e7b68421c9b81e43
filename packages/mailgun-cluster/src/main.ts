/**
 * The mailgun-cluster process: the runtime's `runController` (options, logger, cluster, Manager with
 * leader election, health and metrics) around what `start` adds to it.
 */
import { runController } from '@loopwright/runtime';
import { program } from './config.ts';
import { start } from './start.ts';

await runController(program, (run) => {
  start(run);
});
