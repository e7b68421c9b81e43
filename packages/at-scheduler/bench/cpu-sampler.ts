/**
 * CPU time spent by the processes on the machine that take part in a run: this process (the bench), and
 * its descendants (etcd, kube-apiserver, kube-controller-manager, the limit program, the controller's
 * process, named at-scheduler), grouped by executable name. Sampled every 100 ms from
 * /proc, so a phase's share is read between two instants (the window's opening and the last start).
 * Finding the descendants walks every thread of every process in the tree (a hundred reads, about a
 * millisecond on the bench's event loop); it is redone every second and on each reading,
 * and the samples between only read the stat of the processes found.
 * The bench reports CPU per start next to starts/s: on a machine with two cores the API server and the
 * contender share them, so what a start costs in CPU, on each side, explains the ratio.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ, the unit of /proc/<pid>/stat times; 100 on every architecture Node supports. */
const TICKS_PER_SECOND = 100;
const SAMPLE_MS = 100;
/** How often the descendants are looked for again: processes start seconds before a phase's window. */
const DISCOVER_MS = 1000;

interface Sample {
  ms: number;
  /** Cumulative CPU seconds by executable name (descendants that exited keep their last reading). */
  seconds: Map<string, number>;
}

export class CpuSampler {
  readonly #samples: Sample[] = [];
  /** pid -> [name, last cumulative seconds]: a pid seen once still counts after it exits. */
  readonly #known = new Map<number, [string, number]>();
  readonly #timer: NodeJS.Timeout;
  #descendants: number[] = [];
  #discoveredMs = Number.NEGATIVE_INFINITY;

  constructor() {
    this.#sample();
    this.#timer = setInterval(() => {
      this.#sample();
    }, SAMPLE_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** CPU seconds by executable between `fromMs` and `toMs` (the samples nearest to each). */
  between(fromMs: number, toMs: number): Map<string, number> {
    this.#sample(true);
    const from = this.#nearest(fromMs);
    const to = this.#nearest(toMs);
    const used = new Map<string, number>();
    for (const [name, seconds] of to.seconds) used.set(name, seconds - (from.seconds.get(name) ?? 0));
    return used;
  }

  #nearest(ms: number): Sample {
    let best = this.#samples[0] as Sample;
    for (const sample of this.#samples) if (Math.abs(sample.ms - ms) < Math.abs(best.ms - ms)) best = sample;
    return best;
  }

  #sample(discover = false): void {
    const now = Date.now();
    if (discover || now - this.#discoveredMs >= DISCOVER_MS) {
      this.#descendants = descendants(process.pid);
      this.#discoveredMs = now;
    }
    for (const pid of this.#descendants) {
      const reading = readStat(pid);
      if (reading) this.#known.set(pid, reading);
    }
    const seconds = new Map<string, number>();
    const self = process.cpuUsage();
    seconds.set('bench process (node)', (self.user + self.system) / 1e6);
    for (const [name, value] of this.#known.values()) seconds.set(name, (seconds.get(name) ?? 0) + value);
    this.#samples.push({ ms: now, seconds });
  }
}

function descendants(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number): void => {
    for (const task of readOr(() => readdirSync(`/proc/${parent}/task`), [])) {
      const children = readOr(() => readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8'), '');
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** What `read` returns, or `fallback` when the process (or thread) is gone meanwhile. */
function readOr<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** [executable name, user + system CPU seconds of the process and its waited-for children]. */
function readStat(pid: number): [string, number] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The name is in parentheses and may contain spaces; the fields after it are space-separated.
  const close = stat.lastIndexOf(')');
  const name = stat.slice(stat.indexOf('(') + 1, close);
  const fields = stat.slice(close + 2).split(' ');
  // Fields 14..17 of proc(5) (utime, stime, cutime, cstime) are at 11..14 after the name.
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return [name, ticks / TICKS_PER_SECOND];
}

/** `name 1.23 ms` per start, largest first; `starts` 0 gives totals in seconds. */
export function formatCpuPerStart(used: Map<string, number>, starts: number): string {
  const total = [...used.values()].reduce((a, b) => a + b, 0);
  const per = (seconds: number): string => `${((1000 * seconds) / Math.max(1, starts)).toFixed(2)} ms`;
  return (
    `CPU per start ${per(total)}: ` +
    [...used]
      .filter(([, seconds]) => seconds > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, seconds]) => `${name} ${per(seconds)}`)
      .join(', ')
  );
}
