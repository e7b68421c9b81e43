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
  // Per watched namespace (one controller each); distinct Ats only. A start is two API round trips
  // (the claim, then the pod create), so a burst of due Ats is started at about workers / round trip:
  // 10 held it at 260 starts/s in the bench, 32 reached the API server's own limit on two cores (the
  // limit program's best concurrency was 16 to 64). Also the bound on the starts a crash can catch in
  // flight.
  workers: 32,
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
