import type { GroupVersionResource } from '@loopwright/client';

/**
 * While a resource stays missing, the reflector repeats its "not installed" line this often. Once is
 * what a reader of a pod's log needs; the repeat only keeps the reason visible in a log viewer that
 * shows the last few minutes, at a rate that cannot flood anything.
 */
export const MISSING_RESOURCE_RELOG_MS = 10 * 60_000;

/**
 * The one log line for a resource the API server does not serve (404 on its list or watch), in
 * apimachinery's `GroupVersionResource` notation. For a non-core group it names the CRD to install:
 * a controller started before its CRD is by far the most common cause.
 */
export function missingResourceMessage(ref: GroupVersionResource): string {
  const served = `${ref.group}/${ref.version}, Resource=${ref.plural}`;
  if (ref.group === '') {
    return `resource ${served} is not served by the API server; retrying until it is`;
  }
  return (
    `CRD ${ref.plural}.${ref.group} is not installed (the API server does not serve ${served}); ` +
    `retrying until it is`
  );
}

/**
 * Whether a "not installed" failure should be logged now: the first one at once, then at most once
 * per `intervalMs` while the resource stays missing. The retries themselves follow the backoff and are
 * counted in the `watchError` metric; a line per retry would only bury the reason.
 */
export function shouldLogMissingResource(
  lastLoggedAt: number | undefined,
  now: number,
  intervalMs: number = MISSING_RESOURCE_RELOG_MS,
): boolean {
  return lastLoggedAt === undefined || now - lastLoggedAt >= intervalMs;
}
