/**
 * The Mailgun peer for controller tests: Mailgun's own mock (see mock.ts) behind a small HTTP front that
 * adds what the mock lacks, each following Mailgun's public API:
 *
 * - authentication: HTTP basic `api:<key>`; a wrong key is answered `401 Forbidden` as Mailgun does
 *   (the mock accepts anything);
 * - `GET /v3/<domain>/events`: the mock ignores every filter and drops tags and user variables from its
 *   events; here the `accepted` events of the mails sent through this peer are served with Mailgun's
 *   event structure (`tags`, `user-variables`, `message.headers`) and filters (`event`, `tags`,
 *   `message-id`, `subject`, `from`, `to`, `recipient`, `begin`/`end`/`ascending`, `limit` max 300,
 *   `paging.next` URLs ending in an empty page), optionally visible only after a delay (Mailgun's events
 *   arrive late);
 * - fault injection on the messages endpoint: an HTTP status instead of an answer, a hang (client
 *   timeout), a reset connection, each optionally AFTER the mock accepted the mail (an ambiguous
 *   failure: the mail is out although the client saw an error).
 *
 * Everything else, and every accepted mail, goes through the real mock: `mockAccepted()` counts mails
 * from the mock's own event store.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { listenOnFreePort } from '../listen.ts';
import { startMailgunMock } from './mock.ts';

export type MailgunFault =
  | { status: number; body?: unknown; afterAccept?: boolean }
  | { hang: true; afterAccept?: boolean }
  | { reset: true; afterAccept?: boolean };

/** A mail the peer forwarded to the mock and the mock accepted, with the fields the mock forgets. */
export interface AcceptedMail {
  /** As the messages API returns it: `<...>`. */
  id: string;
  domain: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  tags: string[];
  userVariables: Record<string, string>;
  /** `h:` fields, without the prefix. */
  headers: Record<string, string>;
  /** Unix seconds, as Mailgun's event timestamps. */
  timestamp: number;
}

export interface MailgunPeerOptions {
  /** The API key the peer accepts. Default `key-test`. */
  apiKey?: string;
  /** Accepted events become visible through the events API only this long after acceptance. Default 0. */
  eventDelayMs?: number;
  /**
   * The address the peer listens on. Default `127.0.0.1`; pods of the test node reach it only on the
   * node's bridge address (`loadTestNode().hostAddress`). The mock behind it stays on loopback.
   */
  host?: string;
}

export interface MailgunPeer {
  /** Base URL for mailgun.js (`url` option) and `MAILGUN_URL`, on the `host` it listens on: no `/v3`. */
  url: string;
  /** The mock behind the front, `.../v3`. */
  mockUrl: string;
  apiKey: string;
  setApiKey(key: string): void;
  setEventDelayMs(ms: number): void;
  /** Queue faults for the next requests to the messages endpoint, in order. */
  injectFaults(...faults: MailgunFault[]): void;
  /** Messages requests seen (including failed and faulted ones). */
  messageRequests(): number;
  /** Mails accepted, as recorded by the front (with tags, user variables and headers). */
  accepted(): AcceptedMail[];
  /** Accepted mails as Mailgun's mock itself stores them (`GET /v3/<domain>/events` of the mock). */
  mockAccepted(domain: string): Promise<{ id: string; subject: string; from: string; to: string }[]>;
  stop(): Promise<void>;
}

const MAX_LIMIT = 300;

export async function startMailgunPeer(options: MailgunPeerOptions = {}): Promise<MailgunPeer> {
  const mock = await startMailgunMock();
  const mockBase = mock.url.replace(/\/v3$/, '');
  let apiKey = options.apiKey ?? 'key-test';
  let eventDelayMs = options.eventDelayMs ?? 0;
  const faults: MailgunFault[] = [];
  const accepted: AcceptedMail[] = [];
  const sockets = new Set<Socket>();
  let messageRequests = 0;
  let base = '';

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `peer error: ${String(error)}` }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const body = await readBody(req);
    if (req.headers.authorization !== `Basic ${Buffer.from(`api:${apiKey}`).toString('base64')}`) {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('Forbidden');
      return;
    }
    const messages = /^\/v3\/([^/]+)\/messages$/.exec(url.pathname);
    if (messages && req.method === 'POST')
      return sendMessage(decodeURIComponent(messages[1] ?? ''), req, res, body);
    const events = /^\/v3\/([^/]+)\/events(?:\/([^/]+))?$/.exec(url.pathname);
    if (events && req.method === 'GET') {
      listEvents(decodeURIComponent(events[1] ?? ''), events[2], url, res);
      return;
    }
    const forwarded = await forward(req, url, body);
    res.writeHead(forwarded.status, {
      'content-type': forwarded.headers.get('content-type') ?? 'application/json',
    });
    res.end(Buffer.from(await forwarded.arrayBuffer()));
  }

  async function forward(req: IncomingMessage, url: URL, body: Buffer): Promise<Response> {
    const headers: Record<string, string> = {};
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    return fetch(`${mockBase}${url.pathname}${url.search}`, {
      method: req.method ?? 'GET',
      headers,
      ...(body.length ? { body } : {}),
    });
  }

  async function sendMessage(
    domain: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
  ): Promise<void> {
    messageRequests += 1;
    const fault = faults.shift();
    if (fault && !fault.afterAccept) {
      applyFault(fault, res);
      return;
    }
    const response = await forward(req, new URL(req.url ?? '/', base), body);
    const text = await response.text();
    if (response.ok) {
      const { id } = JSON.parse(text) as { id: string };
      accepted.push(await recordMail(domain, id, req, body));
    }
    if (fault) {
      applyFault(fault, res);
      return;
    }
    res.writeHead(response.status, { 'content-type': 'application/json' });
    res.end(text);
  }

  function applyFault(fault: MailgunFault, res: ServerResponse): void {
    if ('hang' in fault) return; // never answered; the socket is destroyed at stop()
    if ('reset' in fault) {
      res.socket?.destroy();
      return;
    }
    const body = fault.body ?? { message: `injected ${fault.status}` };
    res.writeHead(fault.status, {
      'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
    });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  }

  async function recordMail(
    domain: string,
    id: string,
    req: IncomingMessage,
    body: Buffer,
  ): Promise<AcceptedMail> {
    const request = new Request('http://peer/', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body,
    });
    // The deprecation warns about untrusted, large bodies in servers; these are a test's own small mails.
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    const form = await request.formData();
    const field = (name: string): string => {
      const value = form.get(name);
      return typeof value === 'string' ? value : '';
    };
    const mail: AcceptedMail = {
      id,
      domain,
      from: field('from'),
      to: field('to'),
      subject: field('subject'),
      text: field('text'),
      tags: [],
      userVariables: {},
      headers: {},
      timestamp: Date.now() / 1000,
    };
    for (const [name, value] of form.entries()) {
      if (typeof value !== 'string') continue;
      if (name === 'o:tag') mail.tags.push(value);
      else if (name.startsWith('v:')) mail.userVariables[name.slice(2)] = value;
      else if (name.startsWith('h:')) mail.headers[name.slice(2)] = value;
    }
    return mail;
  }

  function listEvents(domain: string, pageToken: string | undefined, url: URL, res: ServerResponse): void {
    let query = url.searchParams;
    let offset = 0;
    if (pageToken) {
      const page = JSON.parse(Buffer.from(pageToken, 'base64url').toString('utf8')) as {
        query: string;
        offset: number;
      };
      query = new URLSearchParams(page.query);
      offset = page.offset;
    }
    const limitRaw = Number(query.get('limit') ?? '100');
    if (!Number.isInteger(limitRaw) || limitRaw < 1 || limitRaw > MAX_LIMIT) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `limit must be between 1 and ${MAX_LIMIT}` }));
      return;
    }
    const begin = query.has('begin') ? Number(query.get('begin')) : undefined;
    const end = query.has('end') ? Number(query.get('end')) : undefined;
    const ascending =
      query.get('ascending') === 'yes' || (end !== undefined && begin !== undefined && end > begin);
    const visibleBefore = (Date.now() - eventDelayMs) / 1000;
    const matches = accepted
      .filter((m) => m.domain === domain && m.timestamp <= visibleBefore)
      .filter((m) => {
        const lo = Math.min(begin ?? -Infinity, end ?? Infinity);
        const hi = Math.max(begin ?? -Infinity, end ?? Infinity);
        return (
          m.timestamp >= (begin === undefined && end === undefined ? -Infinity : lo) &&
          m.timestamp <= (hi === -Infinity ? Infinity : hi)
        );
      })
      .filter((m) => matchesFilters(m, query))
      .sort((a, b) => (ascending ? a.timestamp - b.timestamp : b.timestamp - a.timestamp));
    const items = matches.slice(offset, offset + limitRaw).map(toEvent);
    const pageUrl = (nextOffset: number): string =>
      `${base}/v3/${encodeURIComponent(domain)}/events/${Buffer.from(JSON.stringify({ query: query.toString(), offset: Math.max(0, nextOffset) })).toString('base64url')}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        items,
        paging: {
          first: pageUrl(0),
          last: pageUrl(Math.max(0, matches.length - limitRaw)),
          next: pageUrl(offset + limitRaw),
          previous: pageUrl(offset - limitRaw),
        },
      }),
    );
  }

  base = await listenOnFreePort(server, options.host ?? '127.0.0.1').catch(async (error: unknown) => {
    await mock.stop();
    throw error;
  });

  return {
    url: base,
    mockUrl: mock.url,
    get apiKey() {
      return apiKey;
    },
    setApiKey: (key) => (apiKey = key),
    setEventDelayMs: (ms) => (eventDelayMs = ms),
    injectFaults: (...more) => faults.push(...more),
    messageRequests: () => messageRequests,
    accepted: () => [...accepted],
    mockAccepted: async (domain) => {
      const response = await fetch(`${mock.url}/${encodeURIComponent(domain)}/events?limit=300`);
      const body = (await response.json()) as {
        items: {
          event: string;
          id: string;
          message?: { headers?: { subject?: string; from?: string; to?: string } };
        }[];
      };
      return body.items
        .filter((e) => e.event === 'accepted' && e.message?.headers?.subject)
        .map((e) => ({
          id: e.id,
          subject: e.message?.headers?.subject ?? '',
          from: e.message?.headers?.from ?? '',
          to: e.message?.headers?.to ?? '',
        }));
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
      await mock.stop();
    },
  };
}

/** Mailgun's simple filter expressions: a plain value must equal the field (tags: one of them). */
function matchesFilters(mail: AcceptedMail, query: URLSearchParams): boolean {
  const event = query.get('event');
  if (event !== null && event !== 'accepted') return false;
  const checks: [string, (value: string) => boolean][] = [
    ['tags', (v) => mail.tags.includes(v)],
    ['message-id', (v) => stripBrackets(v) === stripBrackets(mail.id)],
    ['subject', (v) => mail.subject === v],
    ['from', (v) => mail.from === v],
    ['to', (v) => mail.to === v],
    ['recipient', (v) => mail.to === v],
  ];
  return checks.every(([name, check]) => {
    const value = query.get(name);
    return value === null || check(value);
  });
}

function stripBrackets(id: string): string {
  return id.replace(/^<|>$/g, '');
}

/** One `accepted` event in Mailgun's event structure. */
function toEvent(mail: AcceptedMail): Record<string, unknown> {
  const recipientDomain = mail.to.split('@')[1] ?? '';
  return {
    event: 'accepted',
    id: Buffer.from(`${mail.id}/accepted`).toString('base64url').slice(0, 22),
    timestamp: mail.timestamp,
    'log-level': 'info',
    method: 'http',
    recipient: mail.to,
    'recipient-domain': recipientDomain,
    tags: mail.tags,
    'user-variables': mail.userVariables,
    campaigns: [],
    flags: { 'is-authenticated': true, 'is-routed': false, 'is-system-test': false, 'is-test-mode': false },
    envelope: { sender: mail.from, targets: mail.to, transport: 'smtp' },
    message: {
      headers: { to: mail.to, 'message-id': stripBrackets(mail.id), from: mail.from, subject: mail.subject },
      attachments: [],
      size: mail.text.length,
    },
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}
