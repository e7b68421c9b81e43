import type { ListResult, ResourceClient, WatchRequest } from './list-watch.ts';
import type { GroupVersionResource, KubeObject, WatchEvent } from '@loopwright/client';

/** One watch opened by the code under test; the test pushes events into it. */
export class ScriptedWatch<T extends KubeObject> {
  readonly request: WatchRequest;
  #queue: (WatchEvent<T> | { end: true } | { error: Error })[] = [];
  #wake: (() => void) | undefined;

  constructor(request: WatchRequest) {
    this.request = request;
  }

  push(event: WatchEvent<T>): void {
    this.#enqueue(event);
  }

  /** The server closes the watch cleanly. */
  end(): void {
    this.#enqueue({ end: true });
  }

  /** The watch fails (connection reset, HTTP error...). */
  fail(error: Error): void {
    this.#enqueue({ error });
  }

  #enqueue(item: WatchEvent<T> | { end: true } | { error: Error }): void {
    this.#queue.push(item);
    this.#wake?.();
  }

  async *events(): AsyncGenerator<WatchEvent<T>> {
    const signal = this.request.signal;
    const onAbort = (): void => this.#wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      for (;;) {
        if (signal.aborted) return;
        const item = this.#queue.shift();
        if (item === undefined) {
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
          });
          this.#wake = undefined;
          continue;
        }
        if ('end' in item) return;
        if ('error' in item) throw item.error;
        yield item;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * A {@link ResourceClient} whose list results and watches are scripted by the test. A list call with
 * nothing scripted waits until something is scripted (or the signal aborts).
 */
export class ScriptedClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource = 'configmaps';
  readonly type: GroupVersionResource = { group: '', version: 'v1', plural: 'configmaps' };
  readonly watches: ScriptedWatch<T>[] = [];
  listCalls = 0;
  /** The `shardSelector` of every list call, in order (`undefined`: none). */
  readonly listSelectors: (string | undefined)[] = [];
  #listResults: (ListResult<T> | Error)[] = [];
  #listWaiter: (() => void) | undefined;
  #watchWaiters: (() => void)[] = [];

  /** Scripts the result of the next list call. */
  scriptList(result: ListResult<T> | Error): void {
    this.#listResults.push(result);
    this.#listWaiter?.();
  }

  async list(signal: AbortSignal, shardSelector?: string): Promise<ListResult<T>> {
    this.listCalls++;
    this.listSelectors.push(shardSelector);
    for (;;) {
      signal.throwIfAborted();
      const result = this.#listResults.shift();
      if (result instanceof Error) throw result;
      if (result !== undefined) return { items: [...result.items], resourceVersion: result.resourceVersion };
      await new Promise<void>((resolve) => {
        this.#listWaiter = resolve;
        signal.addEventListener(
          'abort',
          () => {
            resolve();
          },
          { once: true },
        );
      });
    }
  }

  watch(request: WatchRequest): AsyncIterable<WatchEvent<T>> {
    const watch = new ScriptedWatch<T>(request);
    this.watches.push(watch);
    for (const wake of this.#watchWaiters.splice(0)) wake();
    return watch.events();
  }

  /** Resolves with watch number `index` (0-based) once it has been opened. */
  async watchNumber(index: number): Promise<ScriptedWatch<T>> {
    for (;;) {
      const watch = this.watches[index];
      if (watch !== undefined) return watch;
      await new Promise<void>((resolve) => this.#watchWaiters.push(resolve));
    }
  }
}

/** A ConfigMap-shaped object for tests. */
export function configMap(
  name: string,
  resourceVersion: string,
  extra: { namespace?: string; labels?: Record<string, string>; data?: Record<string, string> } = {},
): KubeObject & { data?: Record<string, string> } {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: extra.namespace ?? 'default',
      resourceVersion,
      uid: `uid-${name}`,
      ...(extra.labels === undefined ? {} : { labels: extra.labels }),
    },
    ...(extra.data === undefined ? {} : { data: extra.data }),
  };
}

/** A Logger that records every call. */
export function recordingLogger(): {
  lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[];
  debug: (message: string, fields?: Record<string, unknown>) => void;
  warn: (message: string, fields?: Record<string, unknown>) => void;
  error: (message: string, fields?: Record<string, unknown>) => void;
} {
  const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
  return {
    lines,
    debug: (message, fields) => lines.push({ level: 'debug', message, fields }),
    warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => lines.push({ level: 'error', message, fields }),
  };
}
