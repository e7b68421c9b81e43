/**
 * The closing table of `pnpm mutate`, from each package's Stryker JSON report (the mutation-testing
 * report schema: files -> mutants -> status).
 */

export interface MutationCounts {
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  /** Mutants that did not compile or crashed the run: Stryker leaves them out of the score. */
  errors: number;
}

export interface PackageResult {
  name: string;
  /** Absent when the run wrote no report (it failed before testing mutants). */
  counts: MutationCounts | undefined;
  seconds: number;
  /** The run exited 0: no error, and the score is not under the config's `thresholds.break`. */
  passed: boolean;
}

export interface MutationReport {
  files: Record<string, { mutants: { status: string }[] }>;
}

export function mutationCounts(report: MutationReport): MutationCounts {
  const counts: MutationCounts = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 0 };
  for (const file of Object.values(report.files)) {
    for (const { status } of file.mutants) {
      if (status === 'Killed') counts.killed++;
      else if (status === 'Timeout') counts.timeout++;
      else if (status === 'Survived') counts.survived++;
      else if (status === 'NoCoverage') counts.noCoverage++;
      else if (status === 'CompileError' || status === 'RuntimeError') counts.errors++;
    }
  }
  return counts;
}

/** Stryker's mutation score: detected (killed or timed out) over valid mutants; undefined if none. */
export function mutationScore(counts: MutationCounts): number | undefined {
  const detected = counts.killed + counts.timeout;
  const valid = detected + counts.survived + counts.noCoverage;
  return valid === 0 ? undefined : (100 * detected) / valid;
}

export function formatSummary(results: readonly PackageResult[]): string {
  const header = ['package', 'score', 'killed', 'timeout', 'survived', 'no cov', 'errors', 'time', ''];
  const rows = results.map(({ name, counts, seconds, passed }) => {
    const score = counts && mutationScore(counts);
    return [
      name,
      score === undefined ? '-' : `${score.toFixed(2)}%`,
      ...(counts
        ? [counts.killed, counts.timeout, counts.survived, counts.noCoverage, counts.errors].map(String)
        : ['-', '-', '-', '-', '-']),
      formatDuration(seconds),
      passed ? '' : 'FAILED',
    ];
  });
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => row[column]?.length ?? 0)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function formatDuration(seconds: number): string {
  const whole = Math.round(seconds);
  return whole < 60 ? `${whole}s` : `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
}
