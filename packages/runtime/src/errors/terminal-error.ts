/**
 * A reconcile error that must not be retried, as controller-runtime's `reconcile.TerminalError`: the
 * controller logs it and counts it (`controller_runtime_terminal_reconcile_errors_total`) but does not
 * requeue the key with backoff. The object is reconciled again only when it (or something it watches)
 * changes. Use it for conditions no retry can fix, e.g. an invalid spec the user must edit.
 *
 * Wrap the underlying error as `cause` so logs keep the original: `throw new TerminalError('spec.schedule
 * is invalid', { cause: err })`.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

/**
 * true when `error` is a {@link TerminalError} or has one in its `cause` chain (Go's `errors.Is`
 * semantics: wrapping a terminal error keeps it terminal). Recognised by `name` too, so a second copy of
 * this package in node_modules still agrees.
 */
export function isTerminal(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 16 && current instanceof Error; depth++) {
    if (current instanceof TerminalError || current.name === 'TerminalError') return true;
    current = current.cause;
  }
  return false;
}
