/**
 * Crash injection for the integration tests, and nothing else: with
 * `LOOPWRIGHT_TEST_CRASH_AT=before-send|after-send|after-status-patch` the process SIGKILLs itself the
 * first time it reaches that point, so tests can prove exactly-once delivery across a real crash.
 * Unset in production, where `crashPoint` is a no-op.
 */
export type CrashPoint = 'before-send' | 'after-send' | 'after-status-patch';

const crashAt = process.env.LOOPWRIGHT_TEST_CRASH_AT;

export function crashPoint(point: CrashPoint): void {
  if (crashAt === point) process.kill(process.pid, 'SIGKILL');
}
