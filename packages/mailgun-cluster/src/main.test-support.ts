/**
 * main.ts with a crash injected, for the crash tests and nothing else: with
 * `LOOPWRIGHT_TEST_CRASH_AT=before-send|after-send|after-status-patch` the process SIGKILLs itself the
 * first time a send reaches that checkpoint, so tests prove exactly-once delivery across a real crash.
 */
import { runController } from '@loopwright/runtime';
import { program } from './config.ts';
import { start } from './start.ts';

const crashAt = process.env.LOOPWRIGHT_TEST_CRASH_AT;

await runController(program, (run) => {
  start(run, {
    sendCheckpoint: (checkpoint) => {
      if (checkpoint === crashAt) process.kill(process.pid, 'SIGKILL');
    },
  });
});
