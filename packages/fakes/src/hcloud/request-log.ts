/** One request the fake answered. */
export interface FakeHcloudRequest {
  readonly method: string;
  /** The path as sent, e.g. `/v1/servers/42`. */
  readonly path: string;
  /** The templated path, e.g. `/v1/servers/{id}` (unknown paths: the raw path). */
  readonly endpoint: string;
  readonly query: URLSearchParams;
  readonly status: number;
  /** The fake's clock (Unix ms) when the request arrived. */
  readonly at: number;
}

export interface FakeHcloudRequestFilter {
  method?: string;
  /** Exact path, or a RegExp tested against it. */
  path?: string | RegExp;
  /** Exact templated path, e.g. `/v1/servers/{id}`. */
  endpoint?: string;
  status?: number;
  /** Only requests at or after this fake-clock time (Unix ms). */
  since?: number;
}

/** The fake's request log (`fake.requests`): every request, in arrival-completion order. */
export class FakeHcloudRequestLog {
  readonly #entries: FakeHcloudRequest[] = [];

  /** All requests logged so far (a live read-only view). */
  get entries(): readonly FakeHcloudRequest[] {
    return this.#entries;
  }

  /** Requests matching every given field of `filter` (all requests without one). */
  filter(filter: FakeHcloudRequestFilter = {}): FakeHcloudRequest[] {
    return this.#entries.filter(
      (entry) =>
        (filter.method === undefined || entry.method === filter.method) &&
        (filter.path === undefined ||
          (typeof filter.path === 'string' ? entry.path === filter.path : filter.path.test(entry.path))) &&
        (filter.endpoint === undefined || entry.endpoint === filter.endpoint) &&
        (filter.status === undefined || entry.status === filter.status) &&
        (filter.since === undefined || entry.at >= filter.since),
    );
  }

  /** How many requests match `filter`. */
  count(filter: FakeHcloudRequestFilter = {}): number {
    return this.filter(filter).length;
  }

  /** Forgets all logged requests. */
  clear(): void {
    this.#entries.length = 0;
  }

  /** @internal */
  record(entry: FakeHcloudRequest): void {
    this.#entries.push(entry);
  }
}
