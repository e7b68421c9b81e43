/**
 * at-scheduler's options: its own; the standard ones (kubeconfig, leader election, servers, workers,
 * `--watch-namespace`...) come from the runtime. `--help` and the README table are generated from here.
 */
import { defineProgram, option, text } from '@loopwright/runtime';

export const DEFAULT_IMAGE = 'busybox:1.37.0';

export const program = defineProgram({
  // The executable's (its package's) name; its controllers' names are theirs.
  name: 'at-scheduler',
  packageJson: new URL('../package.json', import.meta.url),
  // Per watched namespace (one controller each); distinct Ats only. Also the bound on the starts a
  // crash can catch in flight. 16 measured no more starts/s than 10 in the bench (the controller's own
  // event loop is the limit there, not its concurrency).
  workers: 10,
  namespaced: true,
  options: {
    defaultImage: option(
      text({
        placeholder: '<image>',
        expected: `an image reference such as ${DEFAULT_IMAGE}`,
        pattern: /^\S+$/,
        maxLength: 1024,
      }),
      {
        flag: '--default-image',
        description: 'image for Ats without spec.image; needs /bin/sh, pin a digest in production',
        default: DEFAULT_IMAGE,
      },
    ),
  },
});
