/**
 * The churn bench's invariants (issue 39, "Done when" 1), as pure functions of the replicas' logs and
 * of what the API server holds at the end, so that churn-check.test.ts can show each of them failing on
 * a deliberately broken record:
 *
 * - no At is reconciled by two replicas at once: per At, the [reconciling, reconciled] intervals of
 *   different replicas (from their logs' timestamps) never overlap; a reconcile a replica left open
 *   ends when its process was seen to exit (a SIGKILLed one's at the kill: it never drained);
 * - every At was started exactly once (its pod exists and is its own, its status records the start,
 *   one claim and one create in all logs, at most one `Started` Event), or else it is among the Ats
 *   the killed replica had in flight (`reconciling` without `reconciled` in its log);
 * - no At started later than the bound (lease duration + 1 s + the machine's baseline) past its schedule.
 */
import { HANDOFF_MESSAGES, Message, keyOf, type ReplicaLog } from './churn-log.ts';

/** One reconcile of one At by one replica. */
export interface Interval {
  replica: string;
  key: string;
  startMs: number;
  endMs: number;
  /** No `reconciled` line: ended at the replica's exit. */
  open: boolean;
}

/** Every reconcile in `log`, matched by reconcileID; a `reconciled` without its start is counted apart. */
export function reconcileIntervals(log: ReplicaLog): { intervals: Interval[]; unmatchedEnds: number } {
  const open = new Map<string, { key: string; startMs: number }>();
  const intervals: Interval[] = [];
  let unmatchedEnds = 0;
  for (const line of log.lines) {
    const key = keyOf(line);
    if (key === undefined || line.reconcileID === undefined) continue;
    if (line.message === Message.reconciling) open.set(line.reconcileID, { key, startMs: line.ms });
    else if (line.message === Message.reconciled) {
      const start = open.get(line.reconcileID);
      if (start === undefined) unmatchedEnds++;
      else
        intervals.push({ replica: log.identity, key, startMs: start.startMs, endMs: line.ms, open: false });
      open.delete(line.reconcileID);
    }
  }
  for (const { key, startMs } of open.values())
    intervals.push({ replica: log.identity, key, startMs, endMs: log.exitMs, open: true });
  return { intervals, unmatchedEnds };
}

/**
 * Pairs of reconciles of one At by two different replicas that overlap in time. Intervals that only
 * touch (one ends in the millisecond the other starts) do not: the logs' timestamps are whole
 * milliseconds, and a hand-off puts at least one API round trip between the two.
 */
export function overlaps(intervals: readonly Interval[]): [Interval, Interval][] {
  const byKey = new Map<string, Interval[]>();
  for (const interval of intervals) byKey.set(interval.key, [...(byKey.get(interval.key) ?? []), interval]);
  const found: [Interval, Interval][] = [];
  for (const list of byKey.values()) {
    list.sort((a, b) => a.startMs - b.startMs);
    for (let i = 0; i < list.length; i++) {
      const a = list[i];
      if (a === undefined) continue;
      for (let j = i + 1; j < list.length; j++) {
        const b = list[j];
        if (b === undefined || b.startMs >= a.endMs) break;
        if (b.replica !== a.replica) found.push([a, b]);
      }
    }
  }
  return found;
}

/** What the API server holds about one At at the end of the run. */
export interface AtRecord {
  key: string;
  scheduleMs: number;
  /** `status.startTime` in epoch ms (the claim's time); undefined when no start is recorded. */
  startMs: number | undefined;
  /** A pod of the At's pod name exists whose controller owner is this At. */
  ownPod: boolean;
  /** `Started` Events regarding it (each Event's series count included). */
  startedEvents: number;
}

/** Per At key, how often all replicas' logs say it was claimed, created, created again or claimed again. */
export interface StartCounts {
  claims: number;
  creates: number;
  createdBefore: number;
  reclaims: number;
  /** The replicas that wrote the claims, in log order per replica. */
  claimedBy: string[];
}

const noStarts = (): StartCounts => ({ claims: 0, creates: 0, createdBefore: 0, reclaims: 0, claimedBy: [] });

function startCounts(logs: readonly ReplicaLog[]): Map<string, StartCounts> {
  const counts = new Map<string, StartCounts>();
  const field: Record<string, 'claims' | 'creates' | 'createdBefore' | 'reclaims' | undefined> = {
    [Message.claimed]: 'claims',
    [Message.started]: 'creates',
    [Message.createdBefore]: 'createdBefore',
    [Message.reclaimed]: 'reclaims',
  };
  for (const log of logs)
    for (const line of log.lines) {
      const key = keyOf(line);
      const name = field[line.message];
      if (key === undefined || name === undefined) continue;
      const entry = counts.get(key) ?? noStarts();
      entry[name]++;
      if (name === 'claims') entry.claimedBy.push(log.identity);
      counts.set(key, entry);
    }
  return counts;
}

/** A span of the run in which buckets changed hands; Ats due in it are the hand-off's. */
export interface Window {
  label: string;
  startMs: number;
  endMs: number;
}

export interface ChurnInput {
  logs: readonly ReplicaLog[];
  ats: readonly AtRecord[];
  /** From the bench's actions and the sharders' hand-off lines. */
  handoffWindows: readonly Window[];
  /** The At's lateness no At may exceed (lease duration + 1 s + baseline). */
  boundMs: number;
}

export interface ChurnReport {
  replicas: number;
  reconciles: number;
  keysChecked: number;
  overlapping: [Interval, Interval][];
  /** `reconciled` lines without their `reconciling`. */
  unmatchedEnds: number;
  /** Open reconciles of replicas that stopped gracefully (which drain before they exit). */
  openAfterGracefulStop: Interval[];
  /** Keys the killed replica had in flight. */
  inFlightAtKill: string[];
  /** In flight at the kill and never started. */
  lostInFlight: string[];
  /** Started twice, never started (and not in flight at the kill), or started without its pod. */
  runExceptions: string[];
  /** Ats claimed again after the kill (in flight then): their one pod was created by the second claim. */
  reclaimedAfterKill: string[];
  /** Started Ats with no `Started` Event (the recorder may drop or lose Events; not a failure). */
  withoutStartedEvent: number;
  latenessMs: number[];
  handoffLatenessMs: number[];
  lateBeyondBound: string[];
  /** Every invariant that failed, one line each; empty when all held. */
  failures: string[];
}

export function checkChurn(input: ChurnInput): ChurnReport {
  const intervals: Interval[] = [];
  let unmatchedEnds = 0;
  for (const log of input.logs) {
    const found = reconcileIntervals(log);
    intervals.push(...found.intervals);
    unmatchedEnds += found.unmatchedEnds;
  }
  const killed = new Set(input.logs.filter((log) => log.killed).map((log) => log.identity));
  const inFlight = new Set(
    intervals.filter((i) => i.open && killed.has(i.replica)).map((interval) => interval.key),
  );
  const openAfterGracefulStop = intervals.filter((i) => i.open && !killed.has(i.replica));
  const overlapping = overlaps(intervals);

  const counts = startCounts(input.logs);
  const runExceptions: string[] = [];
  const lostInFlight: string[] = [];
  const reclaimedAfterKill: string[] = [];
  let withoutStartedEvent = 0;
  for (const at of input.ats) {
    const count = counts.get(at.key) ?? noStarts();
    const excused = inFlight.has(at.key);
    const started = at.startMs !== undefined && at.ownPod;
    if (!started) {
      if (excused) lostInFlight.push(at.key);
      else
        runExceptions.push(
          `${at.key}: never started (start recorded: ${at.startMs !== undefined}, own pod: ${at.ownPod})`,
        );
      continue;
    }
    if (at.startedEvents === 0) withoutStartedEvent++;
    const twice: string[] = [];
    if (count.creates > 1) twice.push(`${count.creates} pod creates`);
    if (count.createdBefore > 0) twice.push(`${count.createdBefore} creates that found its pod`);
    if (at.startedEvents > 1) twice.push(`${at.startedEvents} Started Events`);
    // The killed replica may have claimed it and died before the create: the next owner claims again.
    const claimsAllowed = excused ? 2 : 1;
    if (count.claims > claimsAllowed)
      twice.push(`${count.claims} claims, by ${count.claimedBy.join(' and ')}`);
    // The claimant before it logged nothing when its claim's request was aborted after it had landed.
    if (count.reclaims > 0 && !excused)
      twice.push('claimed again by a replica that found its pod never created');
    if (twice.length > 0) runExceptions.push(`${at.key}: not started exactly once (${twice.join(', ')})`);
    else if (count.claims > 1 || count.reclaims > 0) reclaimedAfterKill.push(at.key);
  }

  const latenessMs: number[] = [];
  const handoffLatenessMs: number[] = [];
  const lateBeyondBound: string[] = [];
  for (const at of input.ats) {
    if (at.startMs === undefined) continue;
    const late = at.startMs - at.scheduleMs;
    latenessMs.push(late);
    if (input.handoffWindows.some((w) => at.scheduleMs >= w.startMs && at.scheduleMs <= w.endMs))
      handoffLatenessMs.push(late);
    if (late > input.boundMs) lateBeyondBound.push(`${at.key}: ${late} ms`);
  }

  const failures: string[] = [];
  for (const [a, b] of overlapping)
    failures.push(
      `${a.key} reconciled by ${a.replica} [${iso(a.startMs)}, ${iso(a.endMs)}${a.open ? ' open' : ''}] and ` +
        `${b.replica} [${iso(b.startMs)}, ${iso(b.endMs)}${b.open ? ' open' : ''}] at once`,
    );
  for (const interval of openAfterGracefulStop)
    failures.push(
      `${interval.replica} stopped gracefully with ${interval.key}'s reconcile of ${iso(interval.startMs)} open`,
    );
  if (unmatchedEnds > 0) failures.push(`${unmatchedEnds} 'reconciled' lines without their 'reconciling'`);
  failures.push(...runExceptions);
  for (const late of lateBeyondBound)
    failures.push(`started later than the bound ${input.boundMs} ms: ${late}`);
  if (input.ats.length === 0) failures.push('no Ats: nothing was checked');
  if (intervals.length === 0) failures.push("no 'reconciling' lines: are the replicas logging at debug?");

  return {
    replicas: input.logs.length,
    reconciles: intervals.length,
    keysChecked: new Set(intervals.map((interval) => interval.key)).size,
    overlapping,
    unmatchedEnds,
    openAfterGracefulStop,
    inFlightAtKill: [...inFlight].sort(),
    lostInFlight,
    runExceptions,
    reclaimedAfterKill,
    withoutStartedEvent,
    latenessMs,
    handoffLatenessMs,
    lateBeyondBound,
    failures,
  };
}

/**
 * The span from `actionMs` (a replica started, stopped or killed) to the last hand-off line any replica
 * logged before `untilMs` (the next action), widened back by `leadMs`: an At due just before a kill may
 * still be in flight in the killed replica.
 */
export function handoffWindow(
  label: string,
  logs: readonly ReplicaLog[],
  actionMs: number,
  untilMs: number,
  leadMs: number,
): Window {
  let endMs = actionMs;
  for (const log of logs)
    for (const line of log.lines)
      if (HANDOFF_MESSAGES.has(line.message) && line.ms >= actionMs && line.ms < untilMs)
        endMs = Math.max(endMs, line.ms);
  return { label, startMs: actionMs - leadMs, endMs };
}

const iso = (ms: number): string => new Date(ms).toISOString();
