/** Invalid {@link LeaderElectorOptions}; thrown by the constructor. */
export class LeaderElectionConfigError extends Error {
  override readonly name = 'LeaderElectionConfigError';
}

/**
 * The guarded work (`onStartedLeading`) threw or rejected while this candidate was leading. The
 * elector stepped down as on cancel (abort, release if `releaseOnCancel`, `onStoppedLeading`) and
 * `run()` rejects with this error; the work's error is the `cause`.
 */
export class LeaderWorkError extends Error {
  override readonly name = 'LeaderWorkError';

  constructor(lease: string, cause: unknown) {
    super(
      `guarded work for lease ${lease} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}
