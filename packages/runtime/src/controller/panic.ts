/**
 * true when a value a reconciler threw is a panic (a bug) rather than a failure; the definition is
 * on `ReconcileResult`. JavaScript has no panics, so this is the closest equivalent of the Go panics
 * controller-runtime recovers: what the engine throws for broken code, and throws no library makes.
 */
export function isPanic(thrown: unknown): boolean {
  if (!(thrown instanceof Error)) return true;
  const programmingError =
    thrown instanceof TypeError || thrown instanceof ReferenceError || thrown instanceof RangeError;
  // The engine never sets a cause; `fetch` (TypeError: fetch failed) and other libraries that reuse
  // these classes for I/O failures do.
  return programmingError && !Object.hasOwn(thrown, 'cause');
}
