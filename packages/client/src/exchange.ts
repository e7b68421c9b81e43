import type http from 'node:http';
import type { Clock, Timer } from '@loopwright/core';
import { KubeApiError, type KubeRequestLine } from './api-error.ts';
import type { KubeRequest } from './kube-request.ts';

/**
 * The life of one request: its abort controller (fed by the caller's signal, the deadline and the
 * idle timer), the HTTP request and response to tear down, and the translation of whatever ended it
 * into a {@link KubeApiError}.
 */
export class Exchange {
  readonly line: KubeRequestLine;
  readonly #clock: Clock;
  readonly #controller = new AbortController();
  readonly #callerSignal: AbortSignal | undefined;
  readonly #onCallerAbort = (): void => {
    this.#controller.abort(this.#callerSignal?.reason);
  };
  readonly #timeoutMs: number | undefined;
  #deadline: Timer | undefined;
  #idle: { timer: Timer; ms: number } | undefined;
  #request: http.ClientRequest | undefined;
  #response: http.IncomingMessage | undefined;

  constructor(clock: Clock, line: KubeRequestLine, request: KubeRequest) {
    this.#clock = clock;
    this.line = line;
    this.#callerSignal = request.signal;
    this.#controller.signal.addEventListener('abort', () => {
      this.#tearDown(this.#controller.signal.reason);
    });
    if (request.signal?.aborted === true) this.#onCallerAbort();
    else request.signal?.addEventListener('abort', this.#onCallerAbort);
    this.#timeoutMs = request.timeoutMs;
  }

  /** Starts the request's `timeoutMs`, once: when it first has its token. Retries run on the same one. */
  startDeadline(): void {
    const timeoutMs = this.#timeoutMs;
    if (timeoutMs === undefined || this.#deadline !== undefined) return;
    this.#deadline = this.#clock.setTimer(() => {
      this.#controller.abort(new DOMException(`no complete response within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
  }

  /** Aborts when any source does: the caller, the deadline, the idle timer. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Fails the exchange when `ms` pass without any data; every {@link heardFrom} starts the wait over. */
  expectDataEvery(ms: number): void {
    // Armed once per attempt of a retried request: an earlier attempt's timer must not outlive it.
    this.stopExpectingData();
    this.#idle = { timer: this.#armIdle(ms), ms };
  }

  /** Cancels the idle timer until the next {@link expectDataEvery}. */
  stopExpectingData(): void {
    this.#idle?.timer.cancel();
    this.#idle = undefined;
  }

  heardFrom(): void {
    if (this.#idle === undefined) return;
    this.#idle.timer.cancel();
    this.#idle.timer = this.#armIdle(this.#idle.ms);
  }

  /** The request as sent: the transport sends none once aborted, so only a later abort tears it down. */
  sent(request: http.ClientRequest): void {
    this.#request = request;
  }

  responded(response: http.IncomingMessage): void {
    this.#response = response;
    this.heardFrom();
  }

  /** What ended the exchange, as a {@link KubeApiError}: an abort source's reason wins over the socket error it caused. */
  toError(error: unknown): KubeApiError {
    if (error instanceof KubeApiError) return error;
    if (this.#controller.signal.aborted) {
      return KubeApiError.noResponse(
        this.#controller.signal.reason,
        this.line,
        this.#callerSignal?.aborted === true,
      );
    }
    return KubeApiError.noResponse(error, this.line, false);
  }

  /** Stops the timers and frees the connection unless the response was read to its end (then it is reused). */
  close(): void {
    this.#deadline?.cancel();
    this.#idle?.timer.cancel();
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
    if (this.#response !== undefined && !this.#response.complete) this.#response.destroy();
    else if (this.#response === undefined) this.#request?.destroy();
  }

  #armIdle(ms: number): Timer {
    return this.#clock.setTimer(() => {
      this.#controller.abort(
        new DOMException(`nothing received for ${ms} ms; connection considered dead`, 'TimeoutError'),
      );
    }, ms);
  }

  #tearDown(reason: unknown): void {
    const error = asError(reason);
    this.#response?.destroy(error);
    this.#request?.destroy(error);
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
