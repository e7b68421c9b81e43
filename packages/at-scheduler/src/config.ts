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
  // (the claim, then the pod create), so a burst of due Ats is started at about
  // workers / (2 x round trip) a second. 16 keeps an API server near its limit busy (the bench: 0.96x
  // the limit's starts/s, 32 gave 1.01x) while queueing the rest here in due order: with 32 in flight,
  // a busy server shared its core among more requests and the tail at 200/s grew (lateness p99 1.29x
  // the limit's against 1.03x). Also the bound on the starts a crash can catch in flight. README,
  // Benchmark.
  workers: 16,
  // A reconcile is a few API calls (read, create a Pod, write status), each bounded by the client's own
  // timeouts: a minute is far past any healthy one and cuts only one stuck on a connection that hangs.
  reconcileTimeout: '1m',
  namespaced: true,
  // Each At is one object to start: a replica needs only its share of them (`--sharding`).
  sharding: true,
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
