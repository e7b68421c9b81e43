import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '@loopwright/core/testing';
import { KubeApiError } from '@loopwright/client';
import { createLogger } from '../log/logger.ts';
import { SecretRegistry } from '../log/redact.ts';
import { EventRecorder, type EventRecorderOptions } from './recorder.ts';
import type { EventSink } from './sink.ts';
import type { EventsV1Event, EventsV1EventSeries, ObjectReference } from './types.ts';

const pod: ObjectReference = {
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: 'ns',
  name: 'web-0',
  uid: 'uid-1',
  resourceVersion: '7',
};
const node: ObjectReference = { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'uid-n' };

/** An in-memory events API: records every call; `fail` makes the next calls reject. */
class FakeSink implements EventSink {
  creates: { namespace: string; event: EventsV1Event }[] = [];
  patches: { namespace: string; name: string; series: EventsV1EventSeries }[] = [];
  stored = new Map<string, EventsV1Event>();
  fail: ((call: 'create' | 'patch') => Error | undefined) | undefined;

  create(namespace: string, event: EventsV1Event): Promise<EventsV1Event> {
    const error = this.fail?.('create');
    if (error) return Promise.reject(error);
    this.creates.push({ namespace, event: structuredClone(event) });
    this.stored.set(`${namespace}/${event.metadata.name}`, structuredClone(event));
    return Promise.resolve(event);
  }

  patchSeries(namespace: string, name: string, series: EventsV1EventSeries): Promise<EventsV1Event> {
    const error = this.fail?.('patch');
    if (error) return Promise.reject(error);
    const stored = this.stored.get(`${namespace}/${name}`);
    if (!stored) return Promise.reject(new KubeApiError('not found', { status: 404, reason: 'NotFound' }));
    this.patches.push({ namespace, name, series });
    stored.series = series;
    return Promise.resolve(stored);
  }
}

function setup(options: Partial<EventRecorderOptions> = {}): {
  clock: FakeClock;
  sink: FakeSink;
  recorder: EventRecorder;
} {
  const clock = new FakeClock({ wallTimeMs: Date.UTC(2025, 5, 1, 12, 0, 0, 123) });
  const sink = new FakeSink();
  const recorder = new EventRecorder({
    sink,
    clock,
    reportingController: 'loopwright.dev/test',
    reportingInstance: 'test-0',
    ...options,
  });
  return { clock, sink, recorder };
}

const failed = {
  type: 'Warning',
  reason: 'FailedCreate',
  action: 'CreatePod',
  note: 'quota exceeded',
} as const;

describe('EventRecorder', () => {
  it('creates an events.k8s.io/v1 Event with the client-go name, MicroTime and reporting fields', async () => {
    const { sink, recorder } = setup();
    recorder.event(pod, { ...failed, related: { apiVersion: 'v1', kind: 'Node', name: 'node-a' } });
    recorder.event(node, { type: 'Normal', reason: 'Registered', action: 'Register' });
    await settle();
    assert.equal(sink.creates.length, 2);
    const [first, second] = sink.creates;
    assert.equal(first?.namespace, 'ns');
    assert.deepEqual(first.event, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: `web-0.${(BigInt(Date.UTC(2025, 5, 1, 12, 0, 0, 123)) * 1_000_000n).toString(16)}`,
        namespace: 'ns',
      },
      eventTime: '2025-06-01T12:00:00.123000Z',
      reportingController: 'loopwright.dev/test',
      reportingInstance: 'test-0',
      action: 'CreatePod',
      reason: 'FailedCreate',
      type: 'Warning',
      note: 'quota exceeded',
      regarding: pod,
      related: { apiVersion: 'v1', kind: 'Node', name: 'node-a' },
    });
    assert.equal(second?.namespace, 'default', 'cluster-scoped objects get events in default');
    assert.match(second.event.metadata.name, /^node-a\.[0-9a-f]+$/);
    assert.equal(second.event.note, undefined);
  });

  it('folds repeats into a series, patched at most once per 30 s with the latest count', async () => {
    const { clock, sink, recorder } = setup();
    recorder.event(pod, failed);
    await clock.advance(1000);
    recorder.event(pod, failed);
    recorder.event(pod, { ...failed, related: undefined });
    await clock.advance(10_000);
    assert.equal(sink.creates.length, 1, 'repeats are not created again');
    assert.equal(sink.patches.length, 0, 'no patch within 30 s of the create');
    await clock.advance(19_000); // 30 s after the create
    assert.deepEqual(
      sink.patches.map((p) => p.series),
      [{ count: 3, lastObservedTime: '2025-06-01T12:00:01.123000Z' }],
    );
    assert.equal(sink.patches[0]?.name, sink.creates[0]?.event.metadata.name);

    recorder.event(pod, failed); // t=30 s: a patch was just written, wait for t=60 s
    await clock.advance(5000);
    recorder.event(pod, failed);
    await clock.advance(24_999);
    assert.equal(sink.patches.length, 1);
    await clock.advance(1);
    assert.deepEqual(
      sink.patches.map((p) => p.series.count),
      [3, 5],
    );
    await clock.advance(120_000);
    assert.equal(sink.patches.length, 2, 'nothing new, no patch');

    recorder.event(pod, failed); // > 30 s since the last write: patched at once
    await clock.advance(0);
    assert.deepEqual(
      sink.patches.map((p) => p.series.count),
      [3, 5, 6],
    );
    assert.deepEqual(recorder.stats(), { created: 1, patched: 3, aggregated: 5, dropped: 0, failed: 0 });
  });

  it('repeats that arrive before the create is sent are created as a series at once', async () => {
    const { sink, recorder } = setup();
    recorder.event(pod, failed);
    recorder.event(pod, failed);
    await recorder.close();
    assert.deepEqual(
      sink.creates.map((c) => c.event.series?.count),
      [2],
    );
    assert.equal(sink.patches.length, 0);
  });

  it('sends writes one at a time in recording order, and drops a new Event when maxQueuedWrites wait', async () => {
    const drops: string[] = [];
    const { sink, recorder } = setup({
      maxQueuedWrites: 2,
      onDrop: (drop) => drops.push(`${drop.regarding.name}:${drop.cause}`),
    });
    const releases: (() => void)[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const create = sink.create.bind(sink);
    sink.create = async (namespace, event) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((resolve) => releases.push(resolve));
      inFlight -= 1;
      return create(namespace, event);
    };
    const at = (name: string): ObjectReference => ({ ...pod, name, uid: name });
    recorder.event(at('a'), failed);
    await settle();
    assert.equal(releases.length, 1, "a's create is on its way");
    recorder.event(at('b'), failed);
    recorder.event(at('c'), failed);
    recorder.event(at('d'), failed);
    assert.deepEqual(drops, ['d:queue-full']);
    assert.equal(recorder.stats().dropped, 1);
    const closed = recorder.close();
    while (sink.creates.length < 3) {
      await settle();
      releases.shift()?.();
    }
    await closed;
    assert.deepEqual(
      sink.creates.map((c) => c.event.regarding.name),
      ['a', 'b', 'c'],
    );
    assert.equal(maxInFlight, 1);
  });

  it('events differing in note, type, reason, action, related or object are separate; resourceVersion is not', async () => {
    const { sink, recorder } = setup();
    recorder.event(pod, failed);
    recorder.event({ ...pod, resourceVersion: '8' }, failed);
    recorder.event(pod, { ...failed, note: 'other' });
    recorder.event(pod, { ...failed, type: 'Normal' });
    recorder.event(pod, { ...failed, reason: 'Other' });
    recorder.event(pod, { ...failed, action: 'Other' });
    recorder.event(pod, { ...failed, related: node });
    recorder.event({ ...pod, uid: 'uid-2' }, failed);
    await settle();
    assert.equal(sink.creates.length, 7);
    assert.equal(recorder.stats().aggregated, 1);
  });

  it('close(timeoutMs) gives up writes the API server does not take in time, and says so', async () => {
    const warnings: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        warnings.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        callback();
      },
    });
    const { sink, recorder, clock } = setup({
      logger: createLogger({ level: 'warn', format: 'json', stream }),
    });
    sink.create = () => new Promise<EventsV1Event>(() => undefined); // an API server that never answers
    recorder.event({ ...pod, uid: 'a' }, failed);
    recorder.event({ ...pod, uid: 'b' }, failed);
    await settle();
    let closed = false;
    const closing = recorder.close(5_000).then(() => (closed = true));
    await clock.advance(4_999);
    assert.equal(closed, false, 'waits for the writes while there is time');
    await clock.advance(1);
    await closing;
    assert.deepEqual(
      warnings.map(({ message, abandoned, timeoutMs }) => ({ message, abandoned, timeoutMs })),
      [
        {
          message: 'gave up Event writes at shutdown: the API server did not take them in time',
          // The two creates (one hanging), and the series flush close() queued behind each.
          abandoned: 4,
          timeoutMs: 5_000,
        },
      ],
    );
  });

  it('close() flushes pending series counts, awaits the writes, and drops later events', async () => {
    const drops: string[] = [];
    const { sink, recorder } = setup({ onDrop: (d) => drops.push(d.cause) });
    recorder.event(pod, failed);
    await settle();
    recorder.event(pod, failed);
    await recorder.close();
    assert.equal(sink.creates.length, 1);
    assert.deepEqual(
      sink.patches.map((p) => p.series.count),
      [2],
    );
    recorder.event(pod, failed);
    await settle();
    assert.equal(sink.creates.length, 1);
    assert.deepEqual(drops, ['closed']);
  });

  it('spam filter: 25 new events per object, then one per 5 min; other objects unaffected; repeats free', async () => {
    const drops: string[] = [];
    const { clock, sink, recorder } = setup({ onDrop: (d) => drops.push(`${d.regarding.name}/${d.reason}`) });
    for (let i = 0; i < 27; i++) recorder.event(pod, { ...failed, reason: `Reason${i}` });
    recorder.event(pod, { ...failed, reason: 'Reason0' }); // a repeat: aggregated, not filtered
    recorder.event(node, failed);
    await settle();
    assert.equal(sink.creates.filter((c) => c.event.regarding.name === 'web-0').length, 25);
    assert.equal(sink.creates.filter((c) => c.event.regarding.name === 'node-a').length, 1);
    assert.deepEqual(drops, ['web-0/Reason25', 'web-0/Reason26']);
    assert.equal(recorder.stats().dropped, 2);
    assert.equal(recorder.stats().aggregated, 1);

    await clock.advance(299_000);
    recorder.event(pod, { ...failed, reason: 'Later1' });
    await clock.advance(1000);
    recorder.event(pod, { ...failed, reason: 'Later2' });
    recorder.event(pod, { ...failed, reason: 'Later3' });
    await settle();
    assert.deepEqual(drops.slice(2), ['web-0/Later1', 'web-0/Later3']);
    await recorder.close();
  });

  it('forgets the spam bucket of an object once it has refilled, and only then; series once finished', async () => {
    const { clock, recorder } = setup();
    for (let i = 0; i < 100; i++) recorder.event({ ...pod, name: `web-${i}`, uid: `uid-${i}` }, failed);
    for (let i = 0; i < 25; i++) recorder.event(node, { ...failed, reason: `Reason${i}` });
    await settle();
    assert.deepEqual(recorder.remembered(), { series: 125, spamFilter: 101 });
    // One token back (a 5-minute refill): the pods' buckets are full again, the node's is not.
    await clock.advance(5 * 60_000);
    recorder.event(pod, { ...failed, reason: 'Later' });
    assert.deepEqual(recorder.remembered(), { series: 126, spamFilter: 2 });
    // Past the series' 6 minutes the sweep finishes the old series too; the node's bucket fills later.
    await clock.advance(60_000);
    recorder.event(pod, { ...failed, reason: 'Later' });
    assert.deepEqual(recorder.remembered(), { series: 1, spamFilter: 2 });
    await recorder.close();
  });

  it('recreates the Event with its series when the patch finds it gone (TTL)', async () => {
    const { clock, sink, recorder } = setup();
    recorder.event(pod, failed);
    await settle();
    sink.stored.clear();
    recorder.event(pod, failed);
    await clock.advance(30_000);
    assert.equal(sink.creates.length, 2);
    const [original, recreated] = sink.creates;
    assert.ok(original && recreated);
    assert.deepEqual(recreated.event.series, { count: 2, lastObservedTime: '2025-06-01T12:00:00.123000Z' });
    assert.notEqual(recreated.event.metadata.name, original.event.metadata.name);
    recorder.event(pod, failed);
    await clock.advance(30_000);
    assert.deepEqual(
      sink.patches.map((p) => [p.name, p.series.count]),
      [[recreated.event.metadata.name, 3]],
    );
  });

  it('never throws into the caller; a failed create is logged and the next identical event creates again', async () => {
    const { sink, recorder } = setup();
    sink.fail = () => new KubeApiError('forbidden', { status: 403, reason: 'Forbidden' });
    recorder.event(pod, failed);
    await settle();
    assert.equal(recorder.stats().failed, 1);
    sink.fail = undefined;
    recorder.event(pod, failed);
    await settle();
    assert.equal(sink.creates.length, 1);
    assert.equal(sink.creates[0]?.event.series, undefined);
  });

  it('retries a name clash once with a new name', async () => {
    const { sink, recorder } = setup();
    let clashes = 1;
    sink.fail = (call) =>
      call === 'create' && clashes-- > 0
        ? new KubeApiError('exists', { status: 409, reason: 'AlreadyExists' })
        : undefined;
    recorder.event(pod, failed);
    await settle();
    assert.equal(sink.creates.length, 1);
    assert.equal(recorder.stats().failed, 0);
  });

  it('names the Event of an object with a 253-character name within 253 characters', async () => {
    const { sink, recorder } = setup();
    recorder.event({ ...pod, name: `${'a'.repeat(126)}.${'b'.repeat(126)}` }, failed);
    await settle();
    const name = sink.creates[0]?.event.metadata.name ?? '';
    assert.ok(name.length > 0 && name.length <= 253, `${name.length} characters: ${name}`);
    assert.match(name, /^a{126}\.b+-[0-9a-f]{8}\.[0-9a-f]{16}$/);
  });

  it('finishes a series after 6 min without repeats: the next occurrence is a new Event', async () => {
    const { clock, sink, recorder } = setup();
    recorder.event(pod, failed);
    await settle();
    recorder.event(pod, failed);
    await clock.advance(6 * 60_000);
    recorder.event(pod, failed);
    await settle();
    assert.equal(sink.creates.length, 2);
    assert.deepEqual(
      sink.patches.map((p) => p.series.count),
      [2],
    );
  });

  it('truncates notes to 1024 bytes without splitting characters; rejects invalid input without throwing', async () => {
    const { sink, recorder } = setup();
    recorder.event(pod, { ...failed, note: 'é'.repeat(600) }); // 1200 bytes
    recorder.event(pod, { ...failed, reason: '' });
    recorder.event(pod, { ...failed, type: 'Error' as 'Warning' });
    await settle();
    assert.equal(sink.creates.length, 1);
    const note = sink.creates[0]?.event.note ?? '';
    assert.equal(note, 'é'.repeat(512));
    assert.equal(Buffer.byteLength(note), 1024);
    assert.equal(recorder.stats().dropped, 2);
  });

  it('redacts credentials from notes as the logger does: Authorization header, bearer token, registered secret', async () => {
    const secrets = new SecretRegistry();
    secrets.register('key-3ax6xnjp29jd6fds4gc373sgvjxteol0');
    const { sink, recorder } = setup({ secrets });
    recorder.event(pod, {
      ...failed,
      note:
        'Mailgun 400: bad request; echoed Authorization: Basic YXBpOmtleS0xMjM= and Bearer ' +
        'hc_T0k3nV4lu3.x-y, key key-3ax6xnjp29jd6fds4gc373sgvjxteol0',
    });
    await settle();
    assert.equal(
      sink.creates[0]?.event.note,
      'Mailgun 400: bad request; echoed Authorization: Basic [REDACTED] and Bearer [REDACTED], key [REDACTED]',
    );
  });

  it('redacts before truncating, so a secret cut at 1024 bytes does not leave its prefix', async () => {
    const secrets = new SecretRegistry();
    secrets.register('key-3ax6xnjp29jd6fds4gc373sgvjxteol0');
    const { sink, recorder } = setup({ secrets });
    recorder.event(pod, { ...failed, note: `${'x'.repeat(1000)} key key-3ax6xnjp29jd6fds4gc373sgvjxteol0` });
    await settle();
    assert.equal(sink.creates[0]?.event.note, `${'x'.repeat(1000)} key [REDACTED]`);
  });

  it('validates reporting fields', () => {
    assert.throws(
      () => new EventRecorder({ sink: new FakeSink(), reportingController: '', reportingInstance: 'x' }),
      /reportingController/,
    );
    assert.throws(() => new EventRecorder({ reportingController: 'c', reportingInstance: 'x' }), /client/);
  });
});
