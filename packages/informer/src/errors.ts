/** An event handler threw or rejected. Reported through `onError`/the logger; delivery continues. */
export class HandlerError extends Error {
  override readonly name = 'HandlerError';
  readonly resource: string;
  readonly event: 'add' | 'update' | 'delete';
  /** `namespace/name` of the object being delivered. */
  readonly key: string;

  constructor(resource: string, event: 'add' | 'update' | 'delete', key: string, cause: unknown) {
    super(
      `${resource} ${event} handler failed for ${key}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.resource = resource;
    this.event = event;
    this.key = key;
  }
}

/** `waitForSync` was pending when the informer was stopped. */
export class InformerStoppedError extends Error {
  override readonly name = 'InformerStoppedError';
}
