/**
 * What a KubeConfig adds to a request (CA, client certificate and key, bearer token, impersonation, a
 * proxy's agent), applied once and reused for {@link REAPPLY_MS}.
 *
 * client-node's `applyToHTTPSOptions` reads the CA and certificate files again (synchronously: in a pod,
 * the service account's `ca.crt` on every request) or decodes their base64 data, and builds the
 * headers anew. Against a local TLS server that was about 20 us of the client's CPU per request, an
 * eighth of what a request through the transport cost it (150 us). client-go reads these once per
 * transport and re-reads a token file once a minute; reusing an application for a second keeps
 * rotation almost immediate: a rotated token, certificate or CA is used by the requests that start a
 * second later at most.
 */
import type http from 'node:http';
import type https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '@loopwright/core';

/** How long one application of the KubeConfig serves the requests that start meanwhile. */
export const REAPPLY_MS = 1000;

export class AppliedKubeConfig {
  readonly #kubeConfig: KubeConfig;
  readonly #clock: Clock;
  #applied: { atMs: number; options: Promise<Applied> } | undefined;

  constructor(kubeConfig: KubeConfig, clock: Clock) {
    this.#kubeConfig = kubeConfig;
    this.#clock = clock;
  }

  /**
   * Sets on `options` what the KubeConfig adds to a request, as `applyToHTTPSOptions` would: its headers
   * over those of `options`, its TLS options and agent. Requests that start together share one
   * application; a failed one is not kept, so the next request applies the KubeConfig again.
   */
  async applyTo(options: https.RequestOptions): Promise<void> {
    const nowMs = this.#clock.now();
    if (this.#applied === undefined || nowMs - this.#applied.atMs >= REAPPLY_MS) {
      const applied = { atMs: nowMs, options: this.#apply() };
      this.#applied = applied;
      applied.options.catch(() => {
        if (this.#applied === applied) this.#applied = undefined;
      });
    }
    const { headers, rest } = await this.#applied.options;
    Object.assign(options, rest);
    options.headers = { ...(options.headers as http.OutgoingHttpHeaders | undefined), ...headers };
  }

  async #apply(): Promise<Applied> {
    // client-node creates the headers when it has a user to set them for; without one there are none.
    const options: https.RequestOptions = {};
    await this.#kubeConfig.applyToHTTPSOptions(options);
    const { headers, ...rest } = options;
    return { headers: (headers ?? {}) as http.OutgoingHttpHeaders, rest };
  }
}

/** One application of the KubeConfig: its headers, and the rest of what it set. */
interface Applied {
  headers: http.OutgoingHttpHeaders;
  rest: https.RequestOptions;
}
