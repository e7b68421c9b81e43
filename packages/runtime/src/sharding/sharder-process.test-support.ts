/**
 * A Sharder run in the test process as the Manager runs one: with a KubeClient of its own (renewals
 * never queue behind anything else), stopped gracefully by `stop` or halted as by SIGKILL by `halt`.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/client';
import type { Logger } from '@loopwright/leader-election';
import { Sharder, type SharderExit } from './sharder.ts';
import type { SharderCallbacks } from './sharder-options.ts';

export interface SharderProcess {
  readonly client: KubeClient;
  /** Aborted: a graceful stop (drain, release, delete the Lease). */
  readonly stop: AbortController;
  /** Aborted: a crash (nothing more is written). */
  readonly halt: AbortController;
  readonly run: Promise<SharderExit>;
}

export interface SharderProcessOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly ring: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly logger: Logger;
  readonly callbacks: SharderCallbacks;
}

export function startSharderProcess({ kc, ...options }: SharderProcessOptions): SharderProcess {
  const client = new KubeClient(kc);
  const stop = new AbortController();
  const halt = new AbortController();
  const sharder = new Sharder({ ...options, client, halt: halt.signal });
  return { client, stop, halt, run: sharder.run(stop.signal) };
}

/** Stops every one (halted: no more writes), waits for their runs and closes their clients. */
export async function haltAll(processes: Iterable<SharderProcess>): Promise<void> {
  const all = [...processes];
  for (const { stop, halt } of all) {
    stop.abort();
    halt.abort();
  }
  await Promise.all(all.map(({ run }) => run));
  await Promise.all(all.map(({ client }) => client.close()));
}
