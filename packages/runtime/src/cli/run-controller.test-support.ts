// Test fixture: a program whose main is runController, with one option of its own. Its start logs
// what it was given, then the Manager runs (no controllers: it serves, syncs nothing, and leads). A
// greeting of "refused" is refused by start, as a value found wrong during start-up (cloud-node's
// network that the API does not know).
import { ConfigError } from '../config/config-error.ts';
import { text } from '../config/kinds.ts';
import { nameAsSet, option } from '../config/option.ts';
import { defineProgram } from '../config/program.ts';
import { runController } from './run-controller.ts';

const program = defineProgram({
  name: 'fixture',
  packageJson: new URL('../../package.json', import.meta.url),
  workers: 2,
  reconcileTimeout: '0',
  namespaced: true,
  // It takes --sharding too, so that the tests can run it sharded.
  sharding: true,
  options: {
    greeting: option(text(), { flag: '--greeting', description: 'logged at start', default: 'hello' }),
  },
});

await runController(program, ({ config, standard, setBy, manager, logger }) => {
  if (config.greeting === 'refused')
    throw new ConfigError(nameAsSet(program.options.greeting, setBy.config.greeting), 'refused at start-up');
  logger.info('started', {
    greeting: config.greeting,
    workers: standard.workers,
    namespaces: standard.watchNamespace,
    identity: manager.identity,
  });
});
