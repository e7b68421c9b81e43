// Test fixture: starts a control plane, prints its state directory and the pids of its processes, then waits to be killed.
import { readFileSync } from 'node:fs';
import { startControlPlane } from './start.ts';

const cp = await startControlPlane();
const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
  .trim()
  .split(/\s+/);
const pids = children.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(cp.dir));
process.stdout.write(`${cp.dir} ${pids.join(',')}\n`);
setInterval(() => undefined, 60_000);
