/**
 * `metav1.MicroTime` text: RFC 3339 in UTC with exactly six fractional digits
 * (`2025-01-01T12:00:00.123000Z`). JavaScript time has millisecond resolution, so the last three digits
 * are always zero. The API server rejects an `eventTime` without the fraction on some versions and
 * client-go always sends six digits, so we do too.
 */
export function microTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
