// Watches through KubeTransport: JSON lines and protobuf frames, idle timeouts, ends and failures.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { FakeClock } from '@loopwright/core/testing';
import { KubeApiFailure } from './api-error.ts';
import { isNotFound } from './classify.ts';
import { protobufObject, watchFrame } from './protobuf-encoding.test-support.ts';
import { collect, rejection, statusBody, unlimitedTransport, wirePeer } from './wire-peer.test-support.ts';

const peer = wirePeer();

describe('KubeTransport watch', () => {
  it('yields each JSON line, whatever the chunking, and ends with the response', async () => {
    const lines = [
      { type: 'ADDED', object: { metadata: { name: 'a' } } },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '150' } } },
      { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } },
    ];
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = lines.map((line) => JSON.stringify(line)).join('\n') + '\n\n';
      let offset = 0;
      const dribble = (): void => {
        if (offset >= text.length) {
          res.end();
          return;
        }
        res.write(text.slice(offset, offset + 7));
        offset += 7;
        setImmediate(dribble);
      };
      dribble();
    };
    const client = unlimitedTransport(peer.kc);
    assert.deepEqual(await collect(client.watch({ path: '/api/v1/pods?watch=1' })), lines);
    client.close();
  });

  it('an error status fails the watch before any document', async () => {
    peer.route = (_req, res) => res.writeHead(410).end(statusBody(410, 'Expired'));
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(collect(client.watch({ path: '/api/v1/pods?watch=1' })));
    assert.deepEqual([error.status, error.reason], [410, 'Expired']);
    client.close();
  });

  it('fails when nothing arrives for idleTimeoutMs, before or after the headers', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { clock });
    peer.route = () => undefined; // no headers ever
    const silentServer = rejection(collect(client.watch({ path: '/w', idleTimeoutMs: 1_000 })));
    await peer.requestsArrived(1);
    await clock.advance(1_000);
    assert.equal((await silentServer).failure, KubeApiFailure.Timeout);

    peer.route = (_req, res) => {
      res.writeHead(200);
      res.write('{"type":"BOOKMARK"}\n'); // ...then silence, like a half-open connection
    };
    const documents: unknown[] = [];
    const halfOpen = rejection(
      (async () => {
        for await (const document of client.watch({ path: '/w', idleTimeoutMs: 1_000 }))
          documents.push(document);
      })(),
    );
    await peer.requestsArrived(2);
    while (documents.length === 0) await clock.advance(0);
    await clock.advance(999);
    assert.equal(clock.pendingTimers(), 1, 'still waiting');
    await clock.advance(1);
    assert.equal((await halfOpen).failure, KubeApiFailure.Timeout);
    assert.deepEqual(documents, [{ type: 'BOOKMARK' }]);
    client.close();
  });

  it('a watch sent again after a 429 lives while data flows: no idle timer of the first attempt fires', async () => {
    const clock = new FakeClock();
    let stream: http.ServerResponse | undefined;
    peer.route = (_req, res) => {
      if (peer.received.length === 1) {
        res.writeHead(429, { 'retry-after': '1' }).end(statusBody(429, 'TooManyRequests'));
        return;
      }
      res.writeHead(200).flushHeaders();
      stream = res;
    };
    const client = unlimitedTransport(peer.kc, { clock });
    const documents: unknown[] = [];
    let failed: unknown;
    const watching = (async () => {
      for await (const document of client.watch({ path: '/w', idleTimeoutMs: 3_000 }))
        documents.push(document);
    })().catch((error: unknown) => {
      failed = error;
    });
    await peer.requestsArrived(1);
    await clock.advance(1_000);
    await peer.requestsArrived(2);
    // A line every 500 ms for 5 s: well past 3 s after the 429, and never 3 s of silence.
    for (let n = 1; n <= 10; n++) {
      stream?.write(`{"n":${n}}\n`);
      while (documents.length < n && failed === undefined) await clock.advance(0);
      assert.equal(failed, undefined, `still watching at line ${n}`);
      await clock.advance(500);
    }
    stream?.end();
    await watching;
    assert.equal(failed, undefined);
    assert.equal(documents.length, 10);
    assert.equal(clock.pendingTimers(), 0, 'no idle timer of an earlier attempt left behind');
    client.close();
  });

  it('a Retry-After longer than idleTimeoutMs is waited out: no idle timeout while waiting to retry', async () => {
    const clock = new FakeClock();
    peer.route = (_req, res) => {
      if (peer.received.length === 1)
        res.writeHead(429, { 'retry-after': '5' }).end(statusBody(429, 'TooManyRequests'));
      else res.writeHead(200).end('{"n":1}\n');
    };
    const client = unlimitedTransport(peer.kc, { clock });
    const watching = collect(client.watch({ path: '/w', idleTimeoutMs: 1_000 }));
    await peer.requestsArrived(1);
    await clock.advance(5_000);
    assert.deepEqual(await watching, [{ n: 1 }]);
    assert.equal(peer.received.length, 2);
    client.close();
  });

  it('a connection cut in the middle of a line is a network failure', async () => {
    peer.route = (req, res) => {
      res.writeHead(200);
      res.write('{"type":"ADDED"}\n{"type":"ADD');
      setImmediate(() => req.socket.destroy());
    };
    const client = unlimitedTransport(peer.kc);
    const documents: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const document of client.watch({ path: '/w' })) documents.push(document);
      })(),
    );
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.deepEqual(documents, [{ type: 'ADDED' }]);
    client.close();
  });

  it('lines of whitespace are no documents, and whitespace after the last line is no unfinished one', async () => {
    peer.route = (_req, res) => res.writeHead(200).end('{"type":"ADDED"}\n  \t\n{"type":"DELETED"}\n \r');
    const client = unlimitedTransport(peer.kc);
    assert.deepEqual(await collect(client.watch({ path: '/w' })), [{ type: 'ADDED' }, { type: 'DELETED' }]);
    client.close();
  });

  it('a line that is not JSON is a decode failure', async () => {
    peer.route = (_req, res) => res.writeHead(200).end('{"type":"ADDED"}\nnot json\n');
    const client = unlimitedTransport(peer.kc);
    assert.equal((await rejection(collect(client.watch({ path: '/w' })))).failure, KubeApiFailure.Decode);
    client.close();
  });

  it('stopping the iteration early closes the connection', async () => {
    let closed: Promise<void> = Promise.resolve();
    peer.route = (req, res) => {
      closed = new Promise((resolve) => {
        req.socket.on('close', () => {
          resolve();
        });
      });
      res.writeHead(200);
      res.write('{"n":1}\n{"n":2}\n');
    };
    const client = unlimitedTransport(peer.kc);
    for await (const document of client.watch({ path: '/w' })) {
      assert.deepEqual(document, { n: 1 });
      break;
    }
    await closed;
    client.close();
  });

  it('aborting ends the watch with an aborted failure', async () => {
    peer.route = (_req, res) => {
      res.writeHead(200);
      res.write('{"n":1}\n');
    };
    const client = unlimitedTransport(peer.kc);
    const abort = new AbortController();
    const error = await rejection(
      (async () => {
        for await (const document of client.watch({ path: '/w', signal: abort.signal })) {
          assert.deepEqual(document, { n: 1 });
          abort.abort();
        }
      })(),
    );
    assert.equal(error.failure, KubeApiFailure.Aborted);
    client.close();
  });
});

describe('KubeTransport protobuf', () => {
  const PROTOBUF = 'application/vnd.kubernetes.protobuf';

  /** A `metav1.Status` message as the API server encodes a 404's. */
  function notFoundStatus(): Uint8Array {
    const writer = new BinaryWriter();
    writer.tag(1, WireType.LengthDelimited).fork().join();
    writer.tag(2, WireType.LengthDelimited).string('Failure');
    writer.tag(3, WireType.LengthDelimited).string('pods "a" not found');
    writer.tag(4, WireType.LengthDelimited).string('NotFound');
    writer.tag(5, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string('a');
    writer.tag(3, WireType.LengthDelimited).string('pods');
    writer.join();
    writer.tag(6, WireType.Varint).int32(404);
    return protobufObject('v1', 'Status', writer.finish());
  }

  it('a protobuf watch asks for protobuf and yields each frame, whatever the chunking', async () => {
    const payloads = ['first event', '', 'a third, longer event '.repeat(20)].map((text) =>
      Buffer.from(text),
    );
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': `${PROTOBUF};stream=watch` });
      const stream = Buffer.concat(payloads.map((payload) => watchFrame(payload)));
      // Cut everywhere: inside length prefixes, inside frames, across frame boundaries.
      const cuts = [1, 3, 6, 17, 18, 19, 25, 100, stream.length];
      let offset = 0;
      const dribble = (): void => {
        const cut = cuts.shift();
        if (cut === undefined) {
          res.end();
          return;
        }
        res.write(stream.subarray(offset, cut));
        offset = cut;
        setTimeout(dribble, 1);
      };
      dribble();
    };
    const client = unlimitedTransport(peer.kc);
    const frames = await collect(client.watch({ path: '/api/v1/pods?watch=1', protobuf: true }));
    assert.ok(frames.every((f) => Buffer.isBuffer(f)));
    assert.deepEqual(
      frames.map((f) => f.toString()),
      payloads.map((p) => p.toString()),
    );
    assert.equal(peer.received[0]?.url, '/prefix/api/v1/pods?watch=1');
    assert.equal(peer.received[0].headers.accept, PROTOBUF);
    client.close();
  });

  it('a watch answered in JSON when protobuf was asked for is a decode failure', async () => {
    peer.route = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"ADDED","object":{}}\n');
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(
      collect(client.watch({ path: '/apis/x/v1/things?watch=1', protobuf: true })),
    );
    assert.equal(error.failure, KubeApiFailure.Decode);
    assert.equal(error.status, 200);
    assert.match(error.message, /asked for protobuf, the server sent application\/json/);
    client.close();
  });

  it('a protobuf watch whose stream ends in the middle of a frame is a network failure', async () => {
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': `${PROTOBUF};stream=watch` });
      res.end(Buffer.concat([watchFrame('whole'), watchFrame('cut short').subarray(0, 7)]));
    };
    const client = unlimitedTransport(peer.kc);
    const frames: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const f of client.watch({ path: '/w', protobuf: true })) frames.push(f);
      })(),
    );
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.equal(error.status, undefined);
    assert.match(error.message, /stream ended in the middle of a frame/);
    assert.deepEqual(
      frames.map((f) => (f as Buffer).toString()),
      ['whole'],
    );
    client.close();
  });

  it('an error response with a protobuf Status gives its reason, message, code and details', async () => {
    peer.route = (_req, res) => res.writeHead(404, { 'content-type': PROTOBUF }).end(notFoundStatus());
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(client.request({ path: '/api/v1/namespaces/ns/pods/a' }));
    assert.equal(isNotFound(error), true);
    assert.deepEqual(
      [error.failure, error.status, error.reason, error.statusMessage, error.details],
      [KubeApiFailure.Status, 404, 'NotFound', 'pods "a" not found', { name: 'a', kind: 'pods' }],
    );
    assert.deepEqual([error.method, error.path], ['GET', '/prefix/api/v1/namespaces/ns/pods/a']);

    const watchError = await rejection(
      collect(client.watch({ path: '/api/v1/pods?watch=1', protobuf: true })),
    );
    assert.deepEqual(
      [watchError.failure, watchError.status, watchError.reason, watchError.statusMessage],
      [KubeApiFailure.Status, 404, 'NotFound', 'pods "a" not found'],
    );
    client.close();
  });

  it('an error response in protobuf that is not a Status is said to be so', async () => {
    const body = Buffer.from('not an object');
    peer.route = (_req, res) => res.writeHead(500, { 'content-type': PROTOBUF }).end(body);
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(client.request({ path: '/api/v1/pods' }));
    assert.deepEqual([error.failure, error.status, error.reason], [KubeApiFailure.Status, 500, '']);
    assert.match(error.message, /HTTP 500: \(13 bytes of protobuf, not a Status\)/);

    const pod = protobufObject('v1', 'Pod', Uint8Array.of(0x0a, 0x00));
    peer.route = (_req, res) => res.writeHead(500, { 'content-type': PROTOBUF }).end(pod);
    const other = await rejection(client.request({ path: '/api/v1/pods' }));
    assert.deepEqual([other.status, other.reason], [500, '']);
    assert.match(other.message, new RegExp(`\\(${pod.length} bytes of protobuf, not a Status\\)`));
    client.close();
  });
});
