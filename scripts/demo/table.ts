/**
 * The demo's table, rendered like `kubectl get`: upper-case headers, columns padded to the widest cell
 * plus three spaces, ages as kubectl prints them. Pure, so tests can call it without a cluster.
 */

/** One object the demo watches, as the table shows it. */
export interface Row {
  kind: string;
  name: string;
  /** Short state, e.g. `PENDING`, `DONE/Succeeded`, `Initialized`; `-` when there is nothing yet. */
  status: string;
  detail: string;
  /** `metadata.creationTimestamp`; undefined while the object does not exist. */
  createdAt: string | undefined;
  /** The state the demo waits for. */
  converged: boolean;
}

const COLUMNS = ['KIND', 'NAME', 'STATUS', 'DETAIL', 'AGE'] as const;

/**
 * kubectl's `duration.HumanDuration`: seconds below 2 minutes, then minutes and seconds below 10
 * minutes, minutes below 3 hours, hours and minutes below 8 hours, hours below 2 days, then days.
 */
export function formatAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

function cells(row: Row, nowMs: number): string[] {
  const age = row.createdAt === undefined ? '-' : formatAge(nowMs - Date.parse(row.createdAt));
  return [row.kind, row.name, row.status, row.detail || '-', age];
}

/** The table as lines without trailing newlines; `nowMs` is what the ages are relative to. */
export function renderTable(rows: readonly Row[], nowMs: number): string[] {
  const grid = [[...COLUMNS], ...rows.map((row) => cells(row, nowMs))];
  const widths = COLUMNS.map((_, column) => Math.max(...grid.map((line) => line[column]?.length ?? 0)));
  return grid.map((line) =>
    line
      .map((cell, column) => (column === line.length - 1 ? cell : cell.padEnd((widths[column] ?? 0) + 3)))
      .join(''),
  );
}

/** What changed for a reader: everything but the ages, which change every second by themselves. */
export function tableSignature(rows: readonly Row[]): string {
  return JSON.stringify(rows.map(({ kind, name, status, detail }) => [kind, name, status, detail]));
}
