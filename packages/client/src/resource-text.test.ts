/**
 * The handle's text reads (`getText`, `streamText`) on the wire: the query and `Accept` they send, the
 * text as it arrives (a character split between chunks included), errors, and the end on abort.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeClient } from './client.ts';
import type { KubeObject } from './object.ts';
import { PODS } from './pod-codec.test-support.ts';
import { rejection, statusBody, wirePeer } from './wire-peer.test-support.ts';

const peer = wirePeer();
const logs = () =>
  new KubeClient(peer.kc, { rateLimit: false }).resource<KubeObject>(PODS).subresource('log');
const POD = { namespace: 'ns', name: 'p' };

describe('getText', () => {
  it("reads the subresource's text with its query, asking for any media type", async () => {
    peer.route = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('line 1\nline 2\n');
    const text = await logs().getText(POD, { query: { container: 'main', tailLines: 2, timestamps: true } });
    assert.equal(text, 'line 1\nline 2\n');
    const [request] = peer.received;
    assert.ok(request);
    assert.equal(
      request.url,
      '/prefix/api/v1/namespaces/ns/pods/p/log?container=main&tailLines=2&timestamps=true',
    );
    assert.equal(request.headers.accept, '*/*');
  });

  it('rejects with the API error of a non-2xx answer', async () => {
    peer.route = (_req, res) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end(statusBody(400, 'BadRequest'));
    const error = await rejection(logs().getText(POD));
    assert.equal(error.status, 400);
  });
});

describe('streamText', () => {
  it('yields the text as it arrives, never half a character, until the server ends it', async () => {
    const euro = Buffer.from('€');
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]));
      setTimeout(() => res.end(Buffer.concat([euro.subarray(1), Buffer.from('b\n')])), 20);
    };
    const pieces: string[] = [];
    for await (const piece of logs().streamText(POD, {
      query: { follow: true },
      signal: new AbortController().signal,
    })) {
      pieces.push(piece);
    }
    assert.equal(pieces.join(''), 'a€b\n');
    assert.ok(
      pieces.every((piece) => !piece.includes('\uFFFD')),
      JSON.stringify(pieces),
    );
    assert.equal(peer.received[0]?.url, '/prefix/api/v1/namespaces/ns/pods/p/log?follow=true');
    assert.equal(peer.received[0].headers.accept, '*/*');
  });

  it('ends quietly when its signal aborts, the server still sending', async () => {
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first\n');
    };
    const abort = new AbortController();
    const pieces: string[] = [];
    for await (const piece of logs().streamText(POD, { signal: abort.signal })) {
      pieces.push(piece);
      abort.abort();
    }
    assert.deepEqual(pieces, ['first\n']);
  });

  it('throws the API error of a non-2xx answer', async () => {
    peer.route = (_req, res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end(statusBody(404, 'NotFound'));
    const stream = logs().streamText(POD, { signal: new AbortController().signal });
    const error = await rejection(stream.next());
    assert.equal(error.status, 404);
  });
});
