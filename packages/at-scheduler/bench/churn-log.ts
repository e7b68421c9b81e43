/**
 * A sharded replica's JSON log, as the churn bench reads it: the lines that say which replica reconciled
 * which At when (`reconciling`/`reconciled`, logged at debug with the reconcile's ID), which At it
 * claimed and started, and its hand-offs. Kept apart from the checks so that the checks take plain
 * records, which the checker's test writes by hand.
 */

/** One JSON log line's fields that the checks read; `ms` is its `timestamp` in epoch ms. */
export interface LogLine {
  ms: number;
  message: string;
  namespace?: string;
  name?: string;
  reconcileID?: string;
  component?: string;
}

/** A replica's whole log and how it ended. */
export interface ReplicaLog {
  identity: string;
  lines: readonly LogLine[];
  /** Epoch ms when its process was seen to exit: a reconcile still open ends there at the latest. */
  exitMs: number;
  /** SIGKILLed: its open reconciles were in flight at the kill (no drain). */
  killed: boolean;
}

/** The messages the checks count, as reconcile.ts and the runtime's controller and sharder log them. */
export const Message = {
  reconciling: 'reconciling',
  reconciled: 'reconciled',
  /** The claim (RUNNING written), at debug, before the pod create. */
  claimed: 'recorded RUNNING; creating the pod',
  /** The pod create answered. */
  started: 'started the command',
  /** A create that found the At's own pod: a second create of one At. */
  createdBefore: 'the pod already exists and is ours (an earlier create went through)',
  /** A claim written again because the claimed pod was never created (a crash between the two). */
  reclaimed:
    'the claimed pod was never created (it would carry the outcome finalizer); claimed again, creating it',
} as const;

/** The sharder's hand-off lines (component `sharding`). */
export const HANDOFF_MESSAGES: ReadonlySet<string> = new Set([
  'joined the ring',
  'took buckets',
  'released buckets',
  'left the ring',
  'another member claimed buckets too: backing off',
  'lost the member Lease: stopping every bucket',
]);

/** The lines of a log file's text that are JSON with a timestamp; anything else (stderr) is skipped. */
export function parseLog(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.startsWith('{')) continue;
    let entry: Partial<Record<keyof LogLine | 'timestamp', unknown>>;
    try {
      entry = JSON.parse(raw) as typeof entry;
    } catch {
      // A line cut by the SIGKILL.
      continue;
    }
    const ms = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : Number.NaN;
    if (Number.isNaN(ms) || typeof entry.message !== 'string') continue;
    const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
    const line: LogLine = { ms, message: entry.message };
    const namespace = text(entry.namespace);
    const name = text(entry.name);
    const reconcileID = text(entry.reconcileID);
    const component = text(entry.component);
    if (namespace !== undefined) line.namespace = namespace;
    if (name !== undefined) line.name = name;
    if (reconcileID !== undefined) line.reconcileID = reconcileID;
    if (component !== undefined) line.component = component;
    lines.push(line);
  }
  return lines;
}

/** `namespace/name` of the object a line is about; undefined for a line about none. */
export function keyOf(line: LogLine): string | undefined {
  return line.name === undefined ? undefined : `${line.namespace ?? ''}/${line.name}`;
}
