/**
 * The few Kubernetes writes the controller makes: merge patches of a custom resource (metadata or the
 * status subresource), optionally conditional on a resourceVersion, and events.k8s.io/v1 Events.
 * Behind an interface so unit tests can record writes without a server.
 */
import { mergePatch, type EventRecorder, type KubeClient } from '@loopwright/runtime';

export { isConflict, isNotFound } from '@loopwright/runtime';

export interface ObjectRef {
  group: string;
  version: string;
  plural: string;
  namespace: string;
  name: string;
}

export interface PatchOptions {
  /** Apply only if the object still has this resourceVersion; otherwise {@link isConflict}. */
  resourceVersion?: string;
  subresource?: 'status';
}

export interface EventInput {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

export interface Regarding {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

/** What reconcile writes through; an interface so unit tests can record writes without a server. */
export interface KubeWriter {
  mergePatch<T>(ref: ObjectRef, patch: Record<string, unknown>, options?: PatchOptions): Promise<T>;
  event(regarding: Regarding, event: EventInput): void;
}

/** Writes through the Manager's rate-limited client and its Events recorder (aggregation, spam filter). */
export class RuntimeWriter implements KubeWriter {
  readonly #client: KubeClient;
  readonly #recorder: EventRecorder;

  constructor(client: KubeClient, recorder: EventRecorder) {
    this.#client = client;
    this.#recorder = recorder;
  }

  mergePatch<T>(ref: ObjectRef, patch: Record<string, unknown>, options: PatchOptions = {}): Promise<T> {
    return mergePatch<T>(this.#client, ref, patch, options);
  }

  /** Never throws: an Event is a diagnostic and must never fail a reconcile. */
  event(regarding: Regarding, event: EventInput): void {
    this.#recorder.event(regarding, event);
  }
}
