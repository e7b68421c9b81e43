/** The bench's Ats and namespaces, written with an unthrottled admin client before any window opens. */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '@loopwright/runtime';
import { createTestNamespace } from '@loopwright/envtest';
import { AT_API_VERSION, AT_KIND, AT_RESOURCE, type At } from '../src/index.ts';

/** When each step of a phase's set-up was done (epoch ms); undefined when not before the window opened. */
export interface SetUp {
  startMs: number;
  createdMs: number;
  /** The controller's: since when it has been idle, having reconciled every At at least once. */
  idleMs?: number;
  windowOpenMs: number;
}

export function formatSetUp(setUp: SetUp, controller: boolean): string {
  const after = (ms: number | undefined): string =>
    ms === undefined || ms > setUp.windowOpenMs
      ? 'NOT before the window opened (its lateness includes the set-up backlog)'
      : `in ${((ms - setUp.startMs) / 1000).toFixed(1)} s`;
  const steps = [`created ${after(setUp.createdMs)}`];
  if (controller) steps.push(`every At reconciled and the controller idle ${after(setUp.idleMs)}`);
  return `set-up: ${steps.join(', ')}; window opened after ${((setUp.windowOpenMs - setUp.startMs) / 1000).toFixed(1)} s`;
}

/** How many creates are in flight at once while Ats are set up. */
const CREATE_CONCURRENCY = 32;

/** `create(i)` for each i below `count`, {@link CREATE_CONCURRENCY} at a time. */
export async function forEachConcurrently(
  count: number,
  create: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) await create(i);
    }),
  );
}

/** An At as the API server returned it from the create. */
export type StoredAt = At & {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string };
};

/** `n` schedules spread evenly over `windowMs` from `openMs`. */
export function windowSchedules(n: number, openMs: number, windowMs: number): number[] {
  return Array.from({ length: n }, (_, i) => openMs + Math.floor((i * windowMs) / n));
}

/** Creates `at-<i>` due at `schedules[i]` for each i; resolves with the stored Ats, in that order. */
export async function createAts(
  client: KubeClient,
  namespace: string,
  schedules: readonly number[],
): Promise<StoredAt[]> {
  const stored = new Array<StoredAt>(schedules.length);
  const ats = client.resource<At>(AT_RESOURCE);
  await forEachConcurrently(schedules.length, async (i) => {
    stored[i] = (await ats.create({
      apiVersion: AT_API_VERSION,
      kind: AT_KIND,
      metadata: { name: `at-${i}`, namespace },
      spec: { schedule: new Date(schedules[i] ?? 0).toISOString(), command: 'true' },
    })) as StoredAt;
  });
  return stored;
}

/**
 * A fresh namespace. Never deleted: each phase has a control plane of its own, stopped with it, so
 * emptying ten thousands of objects out of a namespace would only make the bench longer.
 */
export async function benchNamespace(kc: KubeConfig, prefix: string): Promise<string> {
  return (await createTestNamespace(kc, prefix)).name;
}
