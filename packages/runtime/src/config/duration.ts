/**
 * Go's `time.ParseDuration` syntax, as every Kubernetes component's duration flags take it
 * (`--leader-elect-lease-duration=15s`): a sequence of decimal numbers, each with a unit, such as
 * `300ms`, `1.5h` or `2h45m`; `0` alone is zero. Units: `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`.
 * Negative durations are not accepted: no option here has a use for one.
 */

// The micro sign (U+00B5) and the Greek mu (U+03BC), as Go accepts both, written as escapes: one
// non-ASCII character anywhere in a bundle makes V8 hold the whole bundle's source at two bytes per
// character (about 1 MB of resident memory for nothing).
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  '\u00b5s': 1e-3,
  '\u03bcs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const DURATION = /^(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+$/;
const TERM = /(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/g;

/** Milliseconds (fractional below 1 ms), or undefined when `text` is not a Go duration. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount = '', unit = ''] of text.matchAll(TERM))
    total += Number(amount) * (UNIT_MS[unit] ?? 0);
  return total;
}
