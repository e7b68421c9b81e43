/**
 * Ats falling due continuously: one every `1000 / perSecond` ms, each created `leadMs` before its
 * schedule. The schedules follow the plan, not the creates: a slow create (a busy API server) makes its
 * At arrive late, never the Ats due after it, so the due rate stays what was asked for. Each create is
 * sent on its own, not after the previous one answered, for the same reason.
 */
import type { KubeClient } from '@loopwright/runtime';
import { AT_API_VERSION, AT_KIND, AT_RESOURCE, type At } from '../src/index.ts';

export interface StreamedAt {
  name: string;
  scheduleMs: number;
  /** When the create answered; undefined while it has not (or failed). */
  createdMs?: number;
}

export class AtStream {
  readonly ats: StreamedAt[] = [];
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #intervalMs: number;
  readonly #leadMs: number;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #errors: string[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(client: KubeClient, namespace: string, options: { perSecond: number; leadMs: number }) {
    this.#client = client;
    this.#namespace = namespace;
    this.#intervalMs = 1000 / options.perSecond;
    this.#leadMs = options.leadMs;
  }

  /** Creates due now and from then on, until `stop`. */
  start(): void {
    const startMs = Date.now();
    const tick = (): void => {
      // Every At whose planned create time has come, so that a late timer catches up.
      for (let i = this.ats.length; startMs + i * this.#intervalMs <= Date.now(); i = this.ats.length)
        this.#create(i, Math.round(startMs + i * this.#intervalMs + this.#leadMs));
      this.#timer = setTimeout(tick, Math.max(0, startMs + this.ats.length * this.#intervalMs - Date.now()));
    };
    tick();
  }

  /** Stops creating and waits for the creates in flight. */
  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    await Promise.all(this.#inFlight);
  }

  get errors(): readonly string[] {
    return this.#errors;
  }

  #create(i: number, scheduleMs: number): void {
    const at: StreamedAt = { name: `at-${i}`, scheduleMs };
    this.ats.push(at);
    const create = this.#client
      .resource<At>(AT_RESOURCE)
      .create({
        apiVersion: AT_API_VERSION,
        kind: AT_KIND,
        metadata: { name: at.name, namespace: this.#namespace },
        spec: { schedule: new Date(scheduleMs).toISOString(), command: 'true' },
      })
      .then(
        () => {
          at.createdMs = Date.now();
        },
        (error: unknown) => {
          this.#errors.push(`${at.name}: ${error instanceof Error ? error.message : String(error)}`);
        },
      )
      .finally(() => this.#inFlight.delete(create));
    this.#inFlight.add(create);
  }
}
