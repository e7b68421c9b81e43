/**
 * @loopwright/core/testing: the fake Clock for tests, apart from the production surface so that no
 * controller can reach it by accident.
 */
export { FakeClock, settle } from './fake-clock.ts';
export type { FakeClockOptions } from './fake-clock.ts';
