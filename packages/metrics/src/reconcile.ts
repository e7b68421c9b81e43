import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Values of the `result` label of `controller_runtime_reconcile_total`, as in controller-runtime. */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileResult = (typeof RECONCILE_RESULTS)[number];

/**
 * How one reconcile ended. `terminal_error` (a TerminalError: logged, not retried) and `panic` (the
 * reconciler threw a bug rather than a failure, e.g. a non-Error value or an engine TypeError; see the
 * README) are also errors, and are counted as such.
 */
export type ReconcileOutcome = 'success' | 'requeue' | 'requeue_after' | 'error' | 'terminal_error' | 'panic';

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The reconcile series of one controller. */
export interface ControllerReconcileMetrics {
  /** A worker picked an item and calls reconcile: `controller_runtime_active_workers` + 1. */
  reconcileStarted(): void;
  /**
   * The reconcile started by `reconcileStarted()` ended: active workers - 1, one observation of
   * `controller_runtime_reconcile_time_seconds`, and the counters for `outcome`:
   * - `success` | `requeue` | `requeue_after`: reconcile_total{result=outcome}
   * - `error`: reconcile_total{result="error"}, reconcile_errors_total
   * - `terminal_error`: the same plus terminal_reconcile_errors_total
   * - `panic`: the same as `error` plus reconcile_panics_total
   */
  reconcileFinished(outcome: ReconcileOutcome, durationSeconds: number): void;
  /**
   * A reconcile outlived its timeout and its signal was aborted: `controller_runtime_reconcile_timeouts_total`
   * + 1, counted when the timeout passes (a reconcile that ignores its signal and never returns is
   * counted too). How the reconcile then ends is counted by `reconcileFinished` as usual.
   */
  reconcileTimedOut(): void;
}

export interface ReconcileMetrics {
  /**
   * Creates the series of `controller` the way controller-runtime's `initMetrics` does when a controller
   * starts: reconcile_total for all four results, errors, terminal errors, panics and timeouts at 0, active
   * workers at 0 and max_concurrent_reconciles at `maxConcurrentReconciles`. Counters are never reset
   * when called again for the same controller.
   */
  forController(controller: string, maxConcurrentReconciles: number): ControllerReconcileMetrics;
}

export function createReconcileMetrics(registry: Registry): ReconcileMetrics {
  const registers = [registry];
  const total = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'] as const,
    registers,
  });
  const errors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers,
  });
  const terminalErrors = new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers,
  });
  const panics = new Counter({
    name: 'controller_runtime_reconcile_panics_total',
    help: 'Total number of reconciliation panics per controller',
    labelNames: ['controller'] as const,
    registers,
  });
  const timeouts = new Counter({
    name: 'controller_runtime_reconcile_timeouts_total',
    help: 'Total number of reconciliation timeouts per controller',
    labelNames: ['controller'] as const,
    registers,
  });
  const time = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    buckets: [...RECONCILE_TIME_BUCKETS],
    labelNames: ['controller'] as const,
    registers,
  });
  const maxConcurrent = new Gauge({
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
    labelNames: ['controller'] as const,
    registers,
  });
  const activeWorkers = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'] as const,
    registers,
  });

  return {
    forController(controller, maxConcurrentReconciles) {
      const labels = { controller };
      for (const result of RECONCILE_RESULTS) total.inc({ controller, result }, 0);
      errors.inc(labels, 0);
      terminalErrors.inc(labels, 0);
      panics.inc(labels, 0);
      timeouts.inc(labels, 0);
      maxConcurrent.set(labels, maxConcurrentReconciles);
      // inc(0), not set(0): a second forController() for a running controller must not lose its workers.
      activeWorkers.inc(labels, 0);
      // The reconcile_time_seconds series appears with the first reconcile, as in controller-runtime.

      const active = activeWorkers.labels(labels);
      return {
        reconcileTimedOut: () => {
          timeouts.inc(labels);
        },
        reconcileStarted: () => {
          active.inc();
        },
        reconcileFinished: (outcome, durationSeconds) => {
          active.dec();
          time.observe(labels, durationSeconds);
          switch (outcome) {
            case 'success':
            case 'requeue':
            case 'requeue_after':
              total.inc({ controller, result: outcome });
              return;
            case 'terminal_error':
              terminalErrors.inc(labels);
              break;
            case 'panic':
              panics.inc(labels);
              break;
            case 'error':
              break;
          }
          errors.inc(labels);
          total.inc({ controller, result: 'error' });
        },
      };
    },
  };
}
