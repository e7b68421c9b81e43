/** The bench's ratios: a contender's figures over a baseline's in the same run, gathered over runs. */
import type { Figures } from './starts.ts';
import { formatSpread } from './stats.ts';

/** The controller's figures over a baseline's, run by run. */
export class Ratios {
  readonly #throughput: number[] = [];
  readonly #p99: number[] = [];

  /** Adds one run's ratios and describes them. */
  add(controller: Figures, baseline: Figures): string {
    const throughput = controller.startsPerSecond / baseline.startsPerSecond;
    const p99 = controller.lateness.p99 / baseline.lateness.p99;
    this.#throughput.push(throughput);
    this.#p99.push(p99);
    return `starts/s ${throughput.toFixed(2)}x, lateness p99 ${p99.toFixed(2)}x`;
  }

  /** Min/median/max over the runs so far. */
  overRuns(): string {
    return `starts/s ${formatSpread(this.#throughput, 2, 'x')}, lateness p99 ${formatSpread(this.#p99, 2, 'x')}`;
  }
}
