/**
 * Preloaded (`--import`) into every controller the demo starts. The controllers run in their own process
 * group, so that Ctrl-C reaches the demo only and the demo stops them in order; the price is that
 * nothing would stop them if the demo itself died without cleaning up (SIGKILL, a crash). So each one
 * watches its parent and shuts down gracefully (SIGTERM to itself) once it has been re-parented.
 */
const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.kill(process.pid, 'SIGTERM');
}, 500);
// Never the reason a controller stays alive.
watch.unref();
