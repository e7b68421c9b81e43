/** The bench's ratios: a contender's figures over a baseline's in the same run, gathered over runs. */
import type { Figures } from './starts.ts';
import { spread } from './stats.ts';

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
    return `starts/s ${spreadOf(this.#throughput)}, lateness p99 ${spreadOf(this.#p99)}`;
  }
}

function spreadOf(values: number[]): string {
  const { min, median, max } = spread(values);
  return `${min.toFixed(2)}x / ${median.toFixed(2)}x / ${max.toFixed(2)}x`;
}
