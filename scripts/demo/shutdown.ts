/**
 * Orderly shutdown: every started process and created object registers how to undo it, and the undo
 * steps run once, newest first (controllers stop before the API server they talk to), whether the demo
 * converged, failed or was interrupted.
 */
import { setTimeout as sleep } from 'node:timers/promises';

interface Step {
  what: string;
  undo: () => Promise<unknown>;
}

export class Shutdown {
  readonly #steps: Step[] = [];
  readonly #late = new Set<Promise<void>>();
  readonly #stopping = new AbortController();
  readonly #report: (line: string) => void;
  #undoing = false;
  #done: Promise<void> | undefined;

  constructor(report: (line: string) => void) {
    this.#report = report;
  }

  /** Aborted once shutdown began: waits pass it on so the demo's flow stops starting things. */
  get signal(): AbortSignal {
    return this.#stopping.signal;
  }

  get started(): boolean {
    return this.#stopping.signal.aborted;
  }

  defer(what: string, undo: () => Promise<unknown>): void {
    const step = { what, undo };
    if (!this.#undoing) {
      this.#steps.push(step);
      return;
    }
    // Registered after the undo loop began: undone at once, so nothing escapes.
    const late = this.#run(step);
    this.#late.add(late);
  }

  /**
   * Aborts {@link signal}, gives `inFlight` (the demo's flow) up to `graceMs` to notice and settle, so
   * that a start still under way when Ctrl-C came registers its undo step, then undoes everything.
   * Later calls return the same run. A failing step does not stop the others.
   */
  run(inFlight: Promise<unknown> = Promise.resolve(), graceMs = 30_000): Promise<void> {
    this.#done ??= (async () => {
      this.#stopping.abort(new Error('shutting down'));
      await Promise.race([inFlight.catch(() => undefined), sleep(graceMs, undefined, { ref: false })]);
      this.#undoing = true;
      for (let step = this.#steps.pop(); step; step = this.#steps.pop()) await this.#run(step);
      await Promise.all(this.#late);
    })();
    return this.#done;
  }

  async #run(step: Step): Promise<void> {
    try {
      await step.undo();
    } catch (error) {
      this.#report(`could not ${step.what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
