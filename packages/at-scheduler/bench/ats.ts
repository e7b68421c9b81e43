/** The bench's Ats and namespaces, written with an unthrottled admin client before any window opens. */
import type { KubeConfig } from '@kubernetes/client-node';
import { isNotFound, toKubeApiError, type KubeClient } from '@loopwright/runtime';
import { createTestNamespace } from '@loopwright/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import { AT_API_VERSION, AT_GROUP, AT_KIND, AT_PLURAL, AT_VERSION, type At } from '../src/index.ts';

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
  let next = 0;
  const path = `/apis/${AT_GROUP}/${AT_VERSION}/namespaces/${namespace}/${AT_PLURAL}`;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      for (let i = next++; i < schedules.length; i = next++) {
        stored[i] = await client.requestJson<StoredAt>('POST', path, {
          body: {
            apiVersion: AT_API_VERSION,
            kind: AT_KIND,
            metadata: { name: `at-${i}` },
            spec: { schedule: new Date(schedules[i] ?? 0).toISOString(), command: 'true' },
          },
        });
      }
    }),
  );
  return stored;
}

/** How long the namespace controller may take to empty a namespace of ten thousands of objects. */
const NAMESPACE_DELETION_TIMEOUT_MS = 15 * 60_000;

/** A fresh namespace; `delete()` resolves once the namespace controller has emptied and removed it. */
export async function benchNamespace(
  kc: KubeConfig,
  client: KubeClient,
  prefix: string,
): Promise<{ name: string; delete(): Promise<void> }> {
  const { name } = await createTestNamespace(kc, prefix);
  const path = `/api/v1/namespaces/${name}`;
  return {
    name,
    delete: async () => {
      await client.requestJson('DELETE', path);
      const deadline = Date.now() + NAMESPACE_DELETION_TIMEOUT_MS;
      while (Date.now() < deadline) {
        try {
          await client.requestJson('GET', path);
        } catch (error) {
          if (isNotFound(error)) return;
          // An API server busy deleting ten thousands of objects may time a read out: ask again.
          const status = toKubeApiError(error)?.status;
          if (status === undefined || (status < 500 && status !== 429)) throw error;
        }
        await sleep(500);
      }
      throw new Error(
        `namespace ${name} still exists ${NAMESPACE_DELETION_TIMEOUT_MS / 60_000} min after its deletion`,
      );
    },
  };
}
