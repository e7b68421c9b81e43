/**
 * Watches the ring's member Leases so that a member's renewal is seen when it happens, not at the next
 * tick's list: a Lease's expiry counts from when its last change was SEEN, so seeing it up to a tick late
 * made a crashed member's buckets wait up to a tick longer (issue 39).
 *
 * A hint only. Each event is reported with the local time of its arrival, which is after the write it
 * shows: a change seen through the watch can only make a member look alive longer, never shorter (an
 * event that arrives late records a change "now", which delays; one showing a version already seen, by
 * a list or by an earlier event, changes nothing: see RingView). Planning and the claim's conflict check keep reading the ring with a consistent list, the
 * fence; a watch that is down, slow or forbidden (a Role without `watch`) only brings back the timing of
 * lists alone.
 *
 * Failures resume with the reflector's backoff (800 ms doubling to 30 s, jittered, starting over after
 * two quiet minutes); a 410 Gone starts again from the current Leases. A 403 Forbidden (a Role granted
 * before the watch was: `list` only) is logged at warn once, then at debug: it is retried, so that the
 * watch starts once the Role grants it, but it is no failure of the ring.
 */
import { isForbidden, isGone, KubeApiError, type WatchEvent } from '@loopwright/client';
import { BackoffManager, sleep, type Clock } from '@loopwright/core';
import { REFLECTOR_BACKOFF } from '@loopwright/informer';
import type { Logger } from '@loopwright/leader-election';
import { decodeMemberLease, type LeaseObject, type MemberLease, type MemberLeases } from './member-lease.ts';

/** The server ends each watch after this long; it is then resumed from the last resourceVersion. */
const WATCH_TIMEOUT_SECONDS = 300;

export interface RingWatchOptions {
  readonly leases: MemberLeases;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Fields of every log line (ring, identity). */
  readonly fields: Record<string, unknown>;
  /** A member Lease as an ADDED or MODIFIED event showed it, at the moment the event arrived. */
  readonly onChange: (lease: MemberLease) => void;
  /** For tests: randomness of the backoff's jitter. */
  readonly random?: () => number;
}

/** Runs the watch until `signal` aborts; never rejects (failures are logged and resumed). */
export async function watchRing(options: RingWatchOptions, signal: AbortSignal): Promise<void> {
  const { leases, clock, logger, fields, onChange } = options;
  const backoff = new BackoffManager({
    ...REFLECTOR_BACKOFF,
    clock,
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  let resourceVersion: string | undefined;
  let forbiddenLogged = false;
  while (!signal.aborted) {
    try {
      for await (const event of leases.watch(resourceVersion, WATCH_TIMEOUT_SECONDS, signal)) {
        resourceVersion = versionAfter(event) ?? resourceVersion;
        if (event.type === 'ADDED' || event.type === 'MODIFIED') {
          onChange(decodeMemberLease(event.object, 'WATCH'));
        }
      }
      // Ended by the server's timeout: resume at once.
    } catch (error) {
      if (aborted(signal)) return;
      if (isGone(error)) resourceVersion = undefined;
      const forbidden = isForbidden(error);
      const message = 'watching the ring failed: its changes are seen at the next list meanwhile';
      if (forbidden && forbiddenLogged) logger.debug(message, { ...fields, error });
      else logger.warn(message, { ...fields, error });
      forbiddenLogged ||= forbidden;
      await sleep(clock, backoff.step(), signal);
    }
  }
}

/** A function, not `signal.aborted` inline: the signal changes across awaits, which narrowing ignores. */
function aborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

/** Where to resume after `event`; throws for an ERROR event, as the reflector does. */
function versionAfter(event: WatchEvent<LeaseObject>): string | undefined {
  if (event.type === 'ERROR') throw KubeApiError.fromStatus(event.object);
  return event.object.metadata?.resourceVersion;
}
