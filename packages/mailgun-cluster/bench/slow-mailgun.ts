/**
 * Mailgun as slow as the figure: an HTTP front before the Mailgun peer of @loopwright/fakes (which
 * answers as fast as it can and has no latency option) that answers every send 200 ms after it arrived,
 * or when the peer answered if that is later. The send is forwarded at once, so the mail is accepted when
 * a real Mailgun would accept it, and only the answer waits, as a slow API does. Every other request
 * (events lookups) is forwarded undelayed: they are not what the issue times.
 *
 * Each replica gets a front of its own (its `MAILGUN_URL`), all before one peer: the peer records every
 * mail for the exactly-once check, and each front records when its replica's sends were answered, which
 * attributes each mail to the replica that sent it without reading the replica's logs.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** One send as its replica saw it answered. */
export interface AnsweredSend {
  /** Epoch ms when the answer was written. */
  answeredMs: number;
  status: number;
}

export interface SlowMailgun {
  /** `MAILGUN_URL` for the replica: no `/v3`, as mailgun.js appends it. */
  url: string;
  sends(): readonly AnsweredSend[];
  stop(): Promise<void>;
}

const MESSAGES = /^\/v3\/[^/]+\/messages$/;

export async function startSlowMailgun(peerUrl: string, delayMs: number): Promise<SlowMailgun> {
  const sends: AnsweredSend[] = [];
  const server = createServer((req, res) => {
    const arrivedMs = Date.now();
    const isSend = req.method === 'POST' && MESSAGES.test(new URL(req.url ?? '/', peerUrl).pathname);
    forward(peerUrl, req)
      .then(async (answer) => {
        if (isSend) {
          await sleep(Math.max(0, arrivedMs + delayMs - Date.now()));
          sends.push({ answeredMs: Date.now(), status: answer.status });
        }
        res.writeHead(answer.status, { 'content-type': answer.contentType });
        res.end(answer.body);
      })
      .catch((error: unknown) => {
        // A 502 is a Mailgun outage to the controller: it keeps the claim and looks the mail up later.
        if (isSend) sends.push({ answeredMs: Date.now(), status: 502 });
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `slow front: ${String(error)}` }));
      });
  });
  const url = await listen(server);
  return {
    url,
    sends: () => sends,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}

async function forward(
  peerUrl: string,
  req: IncomingMessage,
): Promise<{ status: number; contentType: string; body: Buffer }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers: Record<string, string> = {};
  if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
  if (req.headers.authorization) headers.authorization = req.headers.authorization;
  const body = Buffer.concat(chunks);
  const response = await fetch(`${peerUrl}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(body.length > 0 ? { body } : {}),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? 'application/json',
    body: Buffer.from(await response.arrayBuffer()),
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
