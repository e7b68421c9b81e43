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
  // Per watched namespace (one controller each); distinct Ats only. A start is two sequential writes,
  // so starts/s = workers / (claim + create latency): 16 is the concurrency at which one API server
  // sustains the most starts (the bench's limit-program sweep), and bounds the starts a crash can
  // catch in flight.
  workers: 16,
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
