/**
 * Talking to Mailgun: send one request mail (mailgun.js) and find an already accepted one (the v3
 * events API), with every failure classified into what the controller must do about it.
 */
import { registerSecret } from '@loopwright/runtime';
import type Mailgun from 'mailgun.js';
import { REQUEST_TAG, messageFields, type RequestMail } from './mail.ts';
import type { MailgunMetrics } from './metrics.ts';

/**
 * How a failure is handled:
 * - `rejected`: Mailgun refused the input (4xx other than 401/403/404/429): retrying the same spec
 *   cannot help;
 * - `unauthorized`: 401 (bad or revoked API key): retry slowly, an operator must act;
 * - `misconfigured`: 403 or 404 (a domain the account does not have, a URL that is not Mailgun's API, a
 *   recipient or sending right the account lacks): the controller's configuration, not the object's
 *   spec, is refused, so no edit of the object could help: retry slowly, an operator must act;
 * - `retryable`: 429, 5xx, network errors and timeouts: retry with exponential backoff.
 *
 * `maybeSent` says whether Mailgun may have accepted the mail anyway: true for 5xx, timeouts and
 * connections that broke mid-request (Mailgun documents no idempotency; a 5xx does not prove the mail
 * was not queued); false when the request provably never got through (4xx answers, refused
 * connections, DNS failures).
 */
export type FailureKind = 'rejected' | 'unauthorized' | 'misconfigured' | 'retryable';

/** What an operator checks after a `misconfigured` failure; in the condition's message and the Event's note. */
export const MISCONFIGURED_HINT = 'check MAILGUN_DOMAIN, MAILGUN_URL and what the account may send';

export class MailgunError extends Error {
  override readonly name = 'MailgunError';
  readonly kind: FailureKind;
  readonly maybeSent: boolean;
  /** HTTP status when Mailgun answered; undefined for network failures. */
  readonly statusCode: number | undefined;
  constructor(
    message: string,
    options: { kind: FailureKind; maybeSent: boolean; statusCode: number | undefined; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.kind = options.kind;
    this.maybeSent = options.maybeSent;
    this.statusCode = options.statusCode;
  }
}

/** Failures before any byte reached Mailgun. */
const notConnectedCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** An error `code`/`statusText` as Node and axios spell them: `ECONNREFUSED`, `ERR_NETWORK`. */
const networkCode = /^(E[A-Z]+|ERR_[A-Z_]+)$/;

/**
 * Classifies what mailgun.js rejects with. mailgun.js reports network failures and timeouts as status
 * 400 whose `message` is the error code (`ECONNREFUSED`, `ECONNABORTED` for its own timeout), so the
 * message is checked before the status.
 */
export function classifyMailgunFailure(error: unknown, what: string): MailgunError {
  const apiError = error as { status?: unknown; message?: unknown; details?: unknown; type?: unknown };
  const message = typeof apiError.message === 'string' ? apiError.message : '';
  const details = typeof apiError.details === 'string' ? apiError.details : '';
  if (networkCode.test(message)) {
    const maybeSent = !notConnectedCodes.has(message);
    return new MailgunError(`${what}: network failure ${message}${details ? ` (${details})` : ''}`, {
      kind: 'retryable',
      maybeSent,
      statusCode: undefined,
      cause: error,
    });
  }
  const status = typeof apiError.status === 'number' ? apiError.status : undefined;
  return fromStatus(
    status,
    `${what}: ${status ?? 'error'} ${[message, details].filter(Boolean).join(': ')}`,
    error,
  );
}

function fromStatus(statusCode: number | undefined, message: string, cause: unknown): MailgunError {
  if (statusCode === 401)
    return new MailgunError(message, { kind: 'unauthorized', maybeSent: false, statusCode, cause });
  if (statusCode === 403 || statusCode === 404)
    return new MailgunError(message, { kind: 'misconfigured', maybeSent: false, statusCode, cause });
  if (statusCode === 429)
    return new MailgunError(message, { kind: 'retryable', maybeSent: false, statusCode, cause });
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500)
    return new MailgunError(message, { kind: 'rejected', maybeSent: false, statusCode, cause });
  return new MailgunError(message, { kind: 'retryable', maybeSent: true, statusCode, cause });
}

export interface MailgunServiceOptions {
  domain: string;
  /**
   * The current API key, asked for per request: a key file re-read when its Secret changes takes
   * effect at the next request, without a restart.
   */
  apiKey: () => string;
  /** Base URL without `/v3`. */
  url: string;
  timeoutMs: number;
  /** Told how each request to Mailgun ended (`loopwright_mailgun_requests_total`). Default: none. */
  metrics?: Pick<MailgunMetrics, 'requestEnded'>;
}

/** Pages of events the lookup reads at most (300 each); more means the tag is shared by far more mail than this controller sends. */
const MAX_EVENT_PAGES = 20;

type MailgunClient = ReturnType<Mailgun['client']>;

/** Mailgun's API as the controller uses it, through mailgun.js and the v3 events API. */
export class MailgunService {
  readonly #options: MailgunServiceOptions;
  /** mailgun.js takes the key when the client is built: one client per key, rebuilt when it changes. */
  #client: { key: string; client: MailgunClient } | undefined;

  constructor(options: MailgunServiceOptions) {
    this.#options = options;
  }

  /**
   * mailgun.js is loaded on the first send, not at start-up: evaluating its prebuilt bundle (324 KB)
   * cost every process about 9 MB of idle RSS and `--help` its load time, whether it ever mails or not.
   */
  async #clientForCurrentKey(): Promise<MailgunClient> {
    const key = this.#options.apiKey();
    if (this.#client?.key !== key) {
      // The Basic credential mailgun.js builds from the key must never reach a log line or an Event.
      registerSecret(basicCredential(key));
      const { default: MailgunClass } = await import('mailgun.js');
      this.#client = {
        key,
        client: new MailgunClass(FormData).client({
          username: 'api',
          key,
          url: this.#options.url,
          timeout: this.#options.timeoutMs,
        }),
      };
    }
    return this.#client.client;
  }

  /** Resolves Mailgun's message id (`<...@domain>`). Rejects with {@link MailgunError}. */
  async send(mail: RequestMail): Promise<string> {
    // Outside the try: failing to load mailgun.js is not an answer of Mailgun's (nothing was sent).
    const client = await this.#clientForCurrentKey();
    let response: { id?: string; status: number; message?: string };
    try {
      response = await client.messages.create(this.#options.domain, {
        ...messageFields(mail),
      } as never);
    } catch (error) {
      const failure = classifyMailgunFailure(error, 'sending the request mail');
      this.#options.metrics?.requestEnded(failure.statusCode);
      throw failure;
    }
    this.#options.metrics?.requestEnded(response.status);
    if (!response.id) {
      // Accepted without an id should not happen; treat it as ambiguous, never as "not sent".
      throw new MailgunError(
        `sending the request mail: answer without a message id (status ${response.status})`,
        { kind: 'retryable', maybeSent: true, statusCode: response.status },
      );
    }
    return response.id;
  }

  /**
   * The id of an `accepted` mail carrying `uid` (any attempt) since `since`, or undefined when the
   * events API shows none (yet). Rejects with {@link MailgunError}.
   *
   * GET /v3/<domain>/events filtered server-side by event type, tag and time (the API cannot filter by
   * user variable), then client-side by the `loopwright-uid` user variable, following `paging.next`.
   * Called directly rather than through mailgun.js, whose `events.get` prints a deprecation warning
   * through `console` on every call, bypassing the controller's logger.
   */
  async findAccepted(uid: string, since: Date, signal?: AbortSignal): Promise<string | undefined> {
    const query = new URLSearchParams({
      event: 'accepted',
      tags: REQUEST_TAG,
      begin: String(Math.floor(since.getTime() / 1000)),
      ascending: 'yes',
      limit: '300',
    });
    let url = `${this.#options.url}/v3/${encodeURIComponent(this.#options.domain)}/events?${query.toString()}`;
    const credential = basicCredential(this.#options.apiKey());
    registerSecret(credential);
    const authorization = `Basic ${credential}`;
    for (let page = 0; page < MAX_EVENT_PAGES; page++) {
      const timeout = AbortSignal.timeout(this.#options.timeoutMs);
      let response: Response;
      try {
        response = await fetch(url, {
          headers: { authorization },
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        this.#options.metrics?.requestEnded(undefined);
        const code = timeout.aborted ? 'ECONNABORTED' : errorCode(error);
        throw new MailgunError(`looking up events: network failure ${code}`, {
          kind: 'retryable',
          maybeSent: false,
          statusCode: undefined,
          cause: error,
        });
      }
      this.#options.metrics?.requestEnded(response.status);
      if (!response.ok) {
        const body = (await response.text().catch(() => '')).slice(0, 200);
        throw fromStatus(response.status, `looking up events: ${response.status} ${body}`, undefined);
      }
      const body = (await response.json()) as EventsPage;
      if (body.items.length === 0) return undefined;
      for (const event of body.items) {
        if (event.event === 'accepted' && event['user-variables']?.['loopwright-uid'] === uid) {
          const id = event.message?.headers?.['message-id'];
          if (id) return id.startsWith('<') ? id : `<${id}>`;
        }
      }
      if (!body.paging?.next) return undefined;
      url = body.paging.next;
    }
    throw new MailgunError(`looking up events: more than ${MAX_EVENT_PAGES} pages of tagged events`, {
      kind: 'retryable',
      maybeSent: false,
      statusCode: undefined,
    });
  }
}

interface EventsPage {
  items: {
    event?: string;
    'user-variables'?: Record<string, unknown>;
    message?: { headers?: { 'message-id'?: string } };
  }[];
  paging?: { next?: string };
}

function basicCredential(key: string): string {
  return Buffer.from(`api:${key}`).toString('base64');
}

function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : 'ERR_NETWORK';
}
