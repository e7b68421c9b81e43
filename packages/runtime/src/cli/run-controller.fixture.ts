// Test fixture: a program whose main is runController, with one option of its own. Its start logs
// what it was given, then the Manager runs (no controllers: it serves, syncs nothing, and leads).
import { text } from '../config/kinds.ts';
import { option } from '../config/option.ts';
import { defineProgram } from '../config/program.ts';
import { runController } from './run-controller.ts';

const program = defineProgram({
  name: 'fixture',
  packageJson: new URL('../../package.json', import.meta.url),
  workers: 2,
  namespaced: true,
  options: {
    greeting: option(text(), { flag: '--greeting', description: 'logged at start', default: 'hello' }),
  },
});

await runController(program, ({ config, standard, manager, logger }) => {
  logger.info('started', {
    greeting: config.greeting,
    workers: standard.workers,
    namespaces: standard.watchNamespace,
    identity: manager.identity,
  });
});
