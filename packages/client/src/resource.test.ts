// What each call of a handle puts on the wire, and how it reads the answer, against a local peer. What
// the real API server makes of it is in resource.int.test.ts.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { FakeClock, settle } from '@loopwright/core/testing';
import { KubeApiError } from './api-error.ts';
import { KubeClient } from './client.ts';
import type { KubeObject } from './object.ts';
import { protobufObject, watchFrame } from './protobuf-encoding.test-support.ts';
import { decodePodMetadata, PODS, TEST_POD_CODEC, testPod, type TestPod } from './pod-codec.test-support.ts';
import { PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import type { ResourceType } from './resource-type.ts';
import { collect, rejection, statusBody, wirePeer } from './wire-peer.test-support.ts';
import { BACKGROUND_QUIET_MS } from './background-priority.ts';

const peer = wirePeer();

const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};
const WIDGETS: ResourceType = {
  group: 'example.com',
  version: 'v2',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
};
const CLUSTER_WIDGETS: ResourceType = {
  ...WIDGETS,
  plural: 'clusterwidgets',
  kind: 'ClusterWidget',
  namespaced: false,
};

interface Widget extends KubeObject {
  spec?: Record<string, unknown>;
  echo?: unknown;
}

const ACCEPT_NO_ANSWER =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

function client(options: { fieldManager?: string } = {}): KubeClient {
  return new KubeClient(peer.kc, { rateLimit: false, ...options });
}

/** Answers every request with `status` and the JSON `body`. */
function answer(status: number, body: unknown): void {
  peer.route = (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
}

/** Answers with the request's body parsed, as `echo` of a Widget. */
function echo(): void {
  peer.route = (_req, res, body) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ kind: 'Widget', echo: body === '' ? null : (JSON.parse(body) as unknown) }));
  };
}

/** The one request the test sent: method, URL (below /prefix), content type, accept and body. */
function sent(index = 0): {
  method: string;
  url: string;
  contentType?: string;
  accept?: string;
  body: unknown;
} {
  const request = peer.received[index];
  assert.ok(request, `request ${index} was sent`);
  const { method, url, headers, body } = request;
  return {
    method,
    url: url.replace(/^\/prefix/, ''),
    ...(headers['content-type'] === undefined ? {} : { contentType: headers['content-type'] }),
    ...(headers.accept === undefined ? {} : { accept: headers.accept }),
    body: body === '' ? undefined : /json|yaml/.test(headers['content-type'] ?? '') ? JSON.parse(body) : body,
  };
}

describe('Resource paths and names', () => {
  it('names the resource as logs and metrics do', () => {
    const kube = client();
    assert.equal(kube.resource(CONFIG_MAPS).name, 'configmaps');
    assert.equal(kube.resource(WIDGETS).name, 'widgets.example.com');
    assert.equal(kube.resource(WIDGETS).status.name, 'widgets.example.com');
    assert.deepEqual(kube.resource(WIDGETS).type, WIDGETS);
  });

  it('reads the core group below /api, any other below /apis/<group>, names escaped', async () => {
    const kube = client();
    await kube.resource(CONFIG_MAPS).get({ namespace: 'n s', name: 'a/b' });
    await kube.resource(WIDGETS).get({ namespace: 'ns', name: 'w' });
    await kube.resource(CLUSTER_WIDGETS).get({ name: 'c' });
    await kube.resource(WIDGETS).status.get({ namespace: 'ns', name: 'w' });
    await kube.resource(WIDGETS).subresource('scale').get({ namespace: 'ns', name: 'w' });
    assert.deepEqual(
      peer.received.map(({ url }) => url),
      [
        '/prefix/api/v1/namespaces/n%20s/configmaps/a%2Fb',
        '/prefix/apis/example.com/v2/namespaces/ns/widgets/w',
        '/prefix/apis/example.com/v2/clusterwidgets/c',
        '/prefix/apis/example.com/v2/namespaces/ns/widgets/w/status',
        '/prefix/apis/example.com/v2/namespaces/ns/widgets/w/scale',
      ],
    );
    assert.ok(
      peer.received.every(({ method, headers }) => method === 'GET' && headers.accept === 'application/json'),
    );
  });

  it('refuses keys and calls that name no object, before sending anything', async () => {
    const kube = client();
    const widgets = kube.resource(WIDGETS);
    await assert.rejects(widgets.get({ name: 'w' }), {
      name: 'TypeError',
      message: 'widgets.example.com is namespaced: the object key needs a namespace',
    });
    await assert.rejects(widgets.get({ namespace: '', name: 'w' }), { name: 'TypeError' });
    await assert.rejects(widgets.get({ namespace: 'ns', name: '' }), {
      name: 'TypeError',
      message: 'widgets.example.com: an object key needs a name',
    });
    await assert.rejects(kube.resource(CLUSTER_WIDGETS).get({ namespace: 'ns', name: 'c' }), {
      name: 'TypeError',
      message: 'clusterwidgets.example.com is cluster-scoped: the object key has no namespace',
    });
    await kube.resource(CLUSTER_WIDGETS).get({ namespace: '', name: 'c' });
    await assert.rejects(widgets.status.list(), {
      name: 'TypeError',
      message: 'widgets.example.com: a subresource belongs to one object, it has no collection',
    });
    assert.throws(() => widgets.status.subresource('scale'), {
      name: 'TypeError',
      message: 'widgets.example.com: a subresource has none',
    });
    await assert.rejects(widgets.update({ metadata: { namespace: 'ns' } }), {
      name: 'TypeError',
      message: 'the object has no metadata.name',
    });
    await assert.rejects(widgets.apply({ metadata: { namespace: 'ns', name: '' } }), { name: 'TypeError' });
    await assert.rejects(widgets.create({ metadata: { name: 'w' } }), { name: 'TypeError' });
    await assert.rejects(widgets.create({}), {
      name: 'TypeError',
      message: 'widgets.example.com is namespaced: the object key needs a namespace',
    });
    await assert.rejects(widgets.update({}), {
      name: 'TypeError',
      message: 'the object has no metadata.name',
    });
    await assert.rejects(widgets.update({ metadata: { namespace: 'ns', name: '' } }), {
      name: 'TypeError',
      message: 'the object has no metadata.name',
    });
    assert.equal(peer.received.length, 1, 'only the cluster-scoped get with an empty namespace');
    assert.equal(sent().url, '/apis/example.com/v2/clusterwidgets/c');
  });
});

describe('Resource.get and getOptional', () => {
  it('get resolves with the object; getOptional with undefined on 404 only', async () => {
    const configMaps = client().resource<KubeObject & { data?: object }>(CONFIG_MAPS);
    answer(200, { kind: 'ConfigMap', data: { a: '1' } });
    assert.deepEqual(await configMaps.get({ namespace: 'ns', name: 'a' }), {
      kind: 'ConfigMap',
      data: { a: '1' },
    });
    assert.deepEqual((await configMaps.getOptional({ namespace: 'ns', name: 'a' }))?.data, { a: '1' });
    peer.route = (_req, res) => res.writeHead(404).end(statusBody(404, 'NotFound'));
    assert.equal(await configMaps.getOptional({ namespace: 'ns', name: 'a' }), undefined);
    assert.equal((await rejection(configMaps.get({ namespace: 'ns', name: 'a' }))).status, 404);
    peer.route = (_req, res) => res.writeHead(403).end(statusBody(403, 'Forbidden'));
    assert.equal(
      (await rejection(configMaps.getOptional({ namespace: 'ns', name: 'a' }))).reason,
      'Forbidden',
    );
  });

  it('passes signal and timeoutMs to the request', async () => {
    const configMaps = client().resource(CONFIG_MAPS);
    peer.route = () => undefined; // never answers
    const timedOut = await rejection(configMaps.get({ namespace: 'ns', name: 'a' }, { timeoutMs: 50 }));
    assert.equal(timedOut.failure, 'timeout');
    const aborted = await rejection(
      configMaps.getOptional({ namespace: 'ns', name: 'a' }, { signal: AbortSignal.timeout(50) }),
    );
    assert.equal(aborted.failure, 'timeout');
    const abort = new AbortController();
    abort.abort(new Error('stop'));
    const stopped = await rejection(configMaps.list({ signal: abort.signal }));
    assert.equal(stopped.failure, 'aborted');
  });
});

describe('Resource.list', () => {
  it('sends the scope and every option as query parameters', async () => {
    const widgets = client().resource(WIDGETS);
    answer(200, { kind: 'WidgetList', items: [] });
    await widgets.list({
      namespace: 'ns',
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name=w',
      shardSelector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
      limit: 10,
      continue: 'token',
      resourceVersion: '5',
      resourceVersionMatch: 'NotOlderThan',
    });
    await widgets.list();
    await client().resource(CLUSTER_WIDGETS).list({ labelSelector: 'x' });
    assert.deepEqual(
      peer.received.map(({ url }) => url.replace(/^\/prefix/, '')),
      [
        '/apis/example.com/v2/namespaces/ns/widgets?labelSelector=a%3Db&fieldSelector=metadata.name%3Dw&' +
          'shardSelector=shardRange%28object.metadata.uid%2C+%270x0000000000000000%27%2C+%270x8000000000000000%27%29&' +
          'limit=10&continue=token&resourceVersion=5&resourceVersionMatch=NotOlderThan',
        '/apis/example.com/v2/widgets',
        '/apis/example.com/v2/clusterwidgets?labelSelector=x',
      ],
    );
    await assert.rejects(client().resource(CLUSTER_WIDGETS).list({ namespace: 'ns' }), { name: 'TypeError' });
  });

  it("gives items the list's apiVersion and kind, keeps an item's own, and reads the list metadata", async () => {
    const widgets = client().resource<Widget>(WIDGETS);
    answer(200, {
      apiVersion: 'example.com/v1',
      kind: 'WidgetList',
      metadata: { resourceVersion: '42', continue: 'next', shardInfo: { selector: 'the applied one' } },
      items: [
        { metadata: { name: 'a' } },
        { apiVersion: 'other/v9', kind: 'Other', metadata: { name: 'b' } },
      ],
    });
    assert.deepEqual(await widgets.list(), {
      items: [
        { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'a' } },
        { apiVersion: 'other/v9', kind: 'Other', metadata: { name: 'b' } },
      ],
      resourceVersion: '42',
      continue: 'next',
      shardSelector: 'the applied one',
    });
    answer(200, { items: [{ metadata: { name: 'a' } }] });
    assert.deepEqual(await widgets.list(), {
      items: [{ apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'a' } }],
      resourceVersion: '',
      continue: '',
    });
    answer(200, { kind: 'Nonsense', metadata: {} });
    assert.deepEqual(await widgets.list(), { items: [], resourceVersion: '', continue: '' });
    // A list kind without the List suffix names no item kind: the handle's is taken.
    answer(200, { kind: 'Widgets', items: [{}] });
    assert.deepEqual((await widgets.list()).items, [{ apiVersion: 'example.com/v2', kind: 'Widget' }]);
    answer(200, { kind: 'ConfigMapList', items: [{}] });
    assert.deepEqual(await client().resource(CONFIG_MAPS).list(), {
      items: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      resourceVersion: '',
      continue: '',
    });
  });

  it('in protobuf: asks for it and decodes each item; an undecodable body is a decode failure', async () => {
    const pods = client().resource<TestPod>(PODS, { protobuf: TEST_POD_CODEC });
    const list = new BinaryWriter();
    list.tag(1, WireType.LengthDelimited).fork().tag(2, WireType.LengthDelimited).string('7').join();
    list.tag(2, WireType.LengthDelimited).bytes(podMessage('p'));
    const bytes = protobufObject('v1', 'PodList', list.finish());
    peer.route = (_req, res) => res.writeHead(200, { 'content-type': PROTOBUF_MEDIA_TYPE }).end(bytes);
    const page = await pods.list({ namespace: 'ns', encoding: 'protobuf' });
    assert.deepEqual(page, {
      items: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }],
      resourceVersion: '7',
      continue: '',
    });
    assert.equal(peer.received[0]?.headers.accept, PROTOBUF_MEDIA_TYPE);
    peer.route = (_req, res) => res.writeHead(200, { 'content-type': PROTOBUF_MEDIA_TYPE }).end('{}');
    const undecodable = await rejection(pods.list({ namespace: 'ns', encoding: 'protobuf' }));
    assert.deepEqual(
      [undecodable.failure, undecodable.status, undecodable.method, undecodable.path],
      ['decode', 200, 'GET', '/api/v1/namespaces/ns/pods'],
    );
    answer(200, { kind: 'PodList', items: [] });
    await pods.list({ namespace: 'ns', encoding: 'json' });
    assert.equal(peer.received.at(-1)?.headers.accept, 'application/json');
  });
});

/** A `Pod` message with only its name. */
function podMessage(name: string): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(name).join();
  return writer.finish();
}

describe('Resource.watch', () => {
  it('sends watch=1, bookmarks unless refused, and the options (a streaming list with its match); yields each event', async () => {
    const widgets = client().resource<Widget>(WIDGETS);
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
    };
    const events = [];
    for await (const event of widgets.watch({
      namespace: 'ns',
      labelSelector: 'a=b',
      fieldSelector: 'f=g',
      shardSelector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
      resourceVersion: '9',
      timeoutSeconds: 30,
      idleTimeoutMs: 5000,
      signal: new AbortController().signal,
    })) {
      events.push(event);
    }
    assert.deepEqual(events, [{ type: 'ADDED', object: { metadata: { name: 'a' } } }]);
    await collect(
      widgets.watch({
        allowWatchBookmarks: false,
        signal: new AbortController().signal,
      }),
    );
    await collect(
      widgets.watch({
        allowWatchBookmarks: true,
        signal: new AbortController().signal,
      }),
    );
    await collect(
      widgets.watch({
        resourceVersion: '',
        sendInitialEvents: true,
        signal: new AbortController().signal,
      }),
    );
    await collect(
      widgets.watch({
        sendInitialEvents: false,
        signal: new AbortController().signal,
      }),
    );
    assert.deepEqual(
      peer.received.map(({ url }) => url.replace(/^\/prefix/, '')),
      [
        '/apis/example.com/v2/namespaces/ns/widgets?labelSelector=a%3Db&fieldSelector=f%3Dg&' +
          'shardSelector=shardRange%28object.metadata.uid%2C+%270x0000000000000000%27%2C+%270x8000000000000000%27%29&' +
          'watch=1&allowWatchBookmarks=true&resourceVersion=9&timeoutSeconds=30',
        '/apis/example.com/v2/widgets?watch=1',
        '/apis/example.com/v2/widgets?watch=1&allowWatchBookmarks=true',
        '/apis/example.com/v2/widgets?watch=1&allowWatchBookmarks=true&resourceVersion=&sendInitialEvents=true&resourceVersionMatch=NotOlderThan',
        '/apis/example.com/v2/widgets?watch=1&allowWatchBookmarks=true',
      ],
    );
  });

  it('idleTimeoutMs fails a silent watch; an abort ends it quietly; an error status throws', async () => {
    const widgets = client().resource<Widget>(WIDGETS);
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(' ');
    };
    const silent = await rejection(
      (async () => {
        await collect(
          widgets.watch({
            idleTimeoutMs: 50,
            signal: new AbortController().signal,
          }),
        );
      })(),
    );
    assert.equal(silent.failure, 'timeout');
    const abort = new AbortController();
    setTimeout(() => {
      abort.abort();
    }, 50);
    const seen = [];
    for await (const event of widgets.watch({ signal: abort.signal })) seen.push(event);
    assert.deepEqual(seen, []);
    peer.route = (_req, res) => res.writeHead(410).end(statusBody(410, 'Gone'));
    const gone = await rejection(
      (async () => {
        await collect(widgets.watch({ signal: new AbortController().signal }));
      })(),
    );
    assert.equal(gone.reason, 'Gone');
  });

  it('in protobuf: decodes each frame with the type of its object; a bad frame is a decode failure', async () => {
    const pods = client().resource<TestPod>(PODS, { protobuf: { decode: decodePodMetadata } });
    const event = (type: string, raw: Uint8Array): Buffer => {
      const writer = new BinaryWriter();
      writer.tag(1, WireType.LengthDelimited).string(type);
      writer.tag(2, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).bytes(raw).join();
      return watchFrame(writer.finish());
    };
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': `${PROTOBUF_MEDIA_TYPE};stream=watch` });
      res.end(Buffer.concat([event('ADDED', protobufObject('v1', 'Pod', podMessage('p')))]));
    };
    const events = [];
    for await (const e of pods.watch({
      namespace: 'ns',
      encoding: 'protobuf',
      signal: new AbortController().signal,
    })) {
      events.push(e);
    }
    assert.deepEqual(events, [
      { type: 'ADDED', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } },
    ]);
    assert.equal(peer.received[0]?.headers.accept, PROTOBUF_MEDIA_TYPE);
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': `${PROTOBUF_MEDIA_TYPE};stream=watch` });
      res.end(watchFrame('not an event'));
    };
    const bad = await rejection(
      (async () => {
        await collect(
          pods.watch({
            namespace: 'ns',
            encoding: 'protobuf',
            signal: new AbortController().signal,
          }),
        );
      })(),
    );
    assert.deepEqual(
      [bad.failure, bad.status, bad.method, bad.path],
      ['decode', 200, 'GET', '/api/v1/namespaces/ns/pods'],
    );
    await assert.rejects(
      (async () => {
        await collect(
          client().resource(PODS).watch({ encoding: 'protobuf', signal: new AbortController().signal }),
        );
      })(),
      { name: 'TypeError', message: 'pods: no protobuf decoder (withProtobuf)' },
    );
  });
});

describe('Resource writes', () => {
  it("create posts JSON with the handle's apiVersion and kind where missing, fieldManager and dryRun", async () => {
    const widgets = client({ fieldManager: 'default-manager' }).resource<Widget>(WIDGETS);
    echo();
    const created = await widgets.create({ metadata: { namespace: 'ns', name: 'w' }, spec: { a: 1 } });
    assert.deepEqual(created.echo, {
      metadata: { namespace: 'ns', name: 'w' },
      spec: { a: 1 },
      apiVersion: 'example.com/v2',
      kind: 'Widget',
    });
    await widgets.create(
      { apiVersion: 'example.com/v1', kind: 'Old', metadata: { namespace: 'ns', name: 'w' } },
      { fieldManager: 'other', dryRun: true },
    );
    await widgets.create({ kind: 'Widget', metadata: { namespace: 'ns', name: 'w' } }, { dryRun: false });
    await widgets.create({ apiVersion: 'example.com/v1', metadata: { namespace: 'ns', name: 'w' } });
    assert.deepEqual(sent(0), {
      method: 'POST',
      url: '/apis/example.com/v2/namespaces/ns/widgets?fieldManager=default-manager',
      contentType: 'application/json',
      accept: 'application/json',
      body: {
        metadata: { namespace: 'ns', name: 'w' },
        spec: { a: 1 },
        apiVersion: 'example.com/v2',
        kind: 'Widget',
      },
    });
    assert.equal(sent(1).url, '/apis/example.com/v2/namespaces/ns/widgets?fieldManager=other&dryRun=All');
    assert.deepEqual(sent(1).body, {
      apiVersion: 'example.com/v1',
      kind: 'Old',
      metadata: { namespace: 'ns', name: 'w' },
    });
    assert.deepEqual(sent(2).body, {
      kind: 'Widget',
      metadata: { namespace: 'ns', name: 'w' },
      apiVersion: 'example.com/v2',
    });
    assert.deepEqual(sent(3).body, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { namespace: 'ns', name: 'w' },
    });
    await client()
      .resource(CLUSTER_WIDGETS)
      .create({ metadata: { name: 'c' } });
    assert.equal(sent(4).url, '/apis/example.com/v2/clusterwidgets');
  });

  it("answer 'none' asks for the metadata in protobuf and resolves with nothing", async () => {
    const configMaps = client().resource(CONFIG_MAPS);
    answer(201, { kind: 'ConfigMap' });
    const created = await configMaps
      .create({ metadata: { namespace: 'ns', name: 'a' } }, { answer: 'none' })
      .then((value: unknown) => value);
    assert.equal(created, undefined);
    const updated = await configMaps
      .update({ metadata: { namespace: 'ns', name: 'a' } }, { answer: 'none', dryRun: true })
      .then((value: unknown) => value);
    assert.equal(updated, undefined);
    assert.deepEqual(sent(0), {
      method: 'POST',
      url: '/api/v1/namespaces/ns/configmaps',
      contentType: 'application/json',
      accept: ACCEPT_NO_ANSWER,
      body: { metadata: { namespace: 'ns', name: 'a' }, apiVersion: 'v1', kind: 'ConfigMap' },
    });
    assert.deepEqual(
      [sent(1).method, sent(1).url, sent(1).accept],
      ['PUT', '/api/v1/namespaces/ns/configmaps/a?dryRun=All', ACCEPT_NO_ANSWER],
    );
  });

  it('in protobuf: sends the encoding, asks for JSON or the metadata, and reads the JSON answer', async () => {
    const pods = client().resource<TestPod>(PODS).withProtobuf(TEST_POD_CODEC);
    const pod = testPod('ns', 'p');
    answer(201, { kind: 'Pod', metadata: { name: 'p' } });
    assert.deepEqual(await pods.create(pod, { encoding: 'protobuf' }), {
      kind: 'Pod',
      metadata: { name: 'p' },
    });
    const none = await pods
      .update(pod, { encoding: 'protobuf', answer: 'none' })
      .then((value: unknown) => value);
    assert.equal(none, undefined);
    const expected = Buffer.from(TEST_POD_CODEC.encode?.(pod) ?? []).toString('latin1');
    const first = peer.received[0];
    const second = peer.received[1];
    assert.deepEqual(
      [first?.method, first?.url, first?.headers['content-type'], first?.headers.accept],
      ['POST', '/prefix/api/v1/namespaces/ns/pods', PROTOBUF_MEDIA_TYPE, 'application/json'],
    );
    assert.deepEqual(
      [second?.method, second?.url, second?.headers['content-type'], second?.headers.accept],
      ['PUT', '/prefix/api/v1/namespaces/ns/pods/p', PROTOBUF_MEDIA_TYPE, ACCEPT_NO_ANSWER],
    );
    assert.equal(Buffer.from(first?.body ?? '', 'utf8').length > 0, true);
    assert.ok(expected.includes('busybox'));
    peer.route = (_req, res) => res.writeHead(201, { 'content-type': 'application/json' }).end('not json');
    const undecodable = await rejection(pods.create(pod, { encoding: 'protobuf' }));
    assert.deepEqual(
      [undecodable.failure, undecodable.status, undecodable.method, undecodable.path],
      ['decode', 201, 'POST', '/api/v1/namespaces/ns/pods'],
    );
    await assert.rejects(client().resource(PODS).create(pod, { encoding: 'protobuf' }), {
      name: 'TypeError',
      message: 'pods: no protobuf encoder (withProtobuf)',
    });
  });

  it('update puts the object at its path, typed on the object and its status, as it is elsewhere', async () => {
    const widgets = client().resource<Widget>(WIDGETS);
    echo();
    const object = { metadata: { namespace: 'ns', name: 'w', resourceVersion: '3' } };
    await widgets.update(object);
    await widgets.status.update(object);
    await widgets.subresource('scale').update(object);
    await widgets.subresource('eviction').create(object);
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => [sent(i).method, sent(i).url, sent(i).body]),
      [
        [
          'PUT',
          '/apis/example.com/v2/namespaces/ns/widgets/w',
          { ...object, apiVersion: 'example.com/v2', kind: 'Widget' },
        ],
        [
          'PUT',
          '/apis/example.com/v2/namespaces/ns/widgets/w/status',
          { ...object, apiVersion: 'example.com/v2', kind: 'Widget' },
        ],
        ['PUT', '/apis/example.com/v2/namespaces/ns/widgets/w/scale', object],
        ['POST', '/apis/example.com/v2/namespaces/ns/widgets/w/eviction', object],
      ],
    );
  });

  it('patch: merge, JSON and apply, with their content types, preconditions and options', async () => {
    const widgets = client({ fieldManager: 'me' }).resource<Widget>(WIDGETS);
    echo();
    const key = { namespace: 'ns', name: 'w' };
    await widgets.patch(key, { merge: { spec: { a: 1 } } });
    await widgets.patch(
      key,
      { merge: { metadata: { labels: { x: 'y' } } } },
      { resourceVersion: '7', dryRun: true },
    );
    await widgets.patch(key, { json: [{ op: 'remove', path: '/spec/a' }] });
    await widgets.patch(key, { json: [{ op: 'remove', path: '/spec/a' }] }, { resourceVersion: '7' });
    await widgets.patch(key, { apply: { spec: { a: 1 } } }, { force: true, fieldManager: 'other' });
    await widgets.patch(key, { apply: { spec: { a: 1 } } }, { force: false, resourceVersion: '8' });
    await widgets.status.patch(key, { merge: { status: {} } });
    assert.deepEqual(
      peer.received.map((_, i) => [sent(i).url, sent(i).contentType, sent(i).body]),
      [
        [
          '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=me',
          'application/merge-patch+json',
          { spec: { a: 1 } },
        ],
        [
          '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=me&dryRun=All',
          'application/merge-patch+json',
          { metadata: { labels: { x: 'y' }, resourceVersion: '7' } },
        ],
        [
          '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=me',
          'application/json-patch+json',
          [{ op: 'remove', path: '/spec/a' }],
        ],
        [
          '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=me',
          'application/json-patch+json',
          [
            { op: 'replace', path: '/metadata/resourceVersion', value: '7' },
            { op: 'remove', path: '/spec/a' },
          ],
        ],
        [
          '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=other&force=true',
          'application/apply-patch+yaml',
          { spec: { a: 1 } },
        ],
        [
          '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=me',
          'application/apply-patch+yaml',
          { spec: { a: 1 }, metadata: { resourceVersion: '8' } },
        ],
        [
          '/apis/example.com/v2/namespaces/ns/widgets/w/status?fieldManager=me',
          'application/merge-patch+json',
          { status: {} },
        ],
      ],
    );
    assert.ok(peer.received.every(({ method }) => method === 'PATCH'));
  });

  it('patch refuses apply without a fieldManager and force on anything but apply', async () => {
    const widgets = client().resource<Widget>(WIDGETS);
    const key = { namespace: 'ns', name: 'w' };
    await assert.rejects(widgets.patch(key, { apply: {} }), {
      name: 'TypeError',
      message: 'widgets.example.com: server-side apply needs a fieldManager',
    });
    await assert.rejects(widgets.patch(key, { merge: {} }, { force: false }), {
      name: 'TypeError',
      message: 'widgets.example.com: force applies to server-side apply only',
    });
    await assert.rejects(widgets.patch(key, { json: [] }, { force: true }), { name: 'TypeError' });
    assert.equal(peer.received.length, 0);
  });

  it('apply sends the configuration typed by the handle, named by its metadata', async () => {
    const widgets = client({ fieldManager: 'me' }).resource<Widget>(WIDGETS);
    echo();
    await widgets.apply({ metadata: { namespace: 'ns', name: 'w' }, spec: { a: 1 } });
    await widgets.apply(
      { apiVersion: 'example.com/v1', kind: 'Old', metadata: { namespace: 'ns', name: 'w' } },
      { dryRun: true },
    );
    assert.deepEqual(sent(0), {
      method: 'PATCH',
      url: '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=me',
      contentType: 'application/apply-patch+yaml',
      accept: 'application/json',
      body: {
        metadata: { namespace: 'ns', name: 'w' },
        spec: { a: 1 },
        apiVersion: 'example.com/v2',
        kind: 'Widget',
      },
    });
    assert.equal(sent(1).url, '/apis/example.com/v2/namespaces/ns/widgets/w?fieldManager=me&dryRun=All');
    assert.deepEqual(sent(1).body, {
      apiVersion: 'example.com/v1',
      kind: 'Old',
      metadata: { namespace: 'ns', name: 'w' },
    });
  });

  it('delete sends DeleteOptions; true when deleted, false on 404, rejects otherwise', async () => {
    const widgets = client({ fieldManager: 'unused-by-delete' }).resource<Widget>(WIDGETS);
    const key = { namespace: 'ns', name: 'w' };
    answer(200, { kind: 'Status', status: 'Success' });
    assert.equal(await widgets.delete(key), true);
    assert.equal(
      await widgets.delete(key, {
        preconditions: { uid: 'u', resourceVersion: '4' },
        propagationPolicy: 'Foreground',
        gracePeriodSeconds: 0,
        dryRun: true,
      }),
      true,
    );
    await widgets.delete(key, { dryRun: false });
    assert.deepEqual(sent(0), {
      method: 'DELETE',
      url: '/apis/example.com/v2/namespaces/ns/widgets/w',
      contentType: 'application/json',
      accept: 'application/json',
      body: { apiVersion: 'v1', kind: 'DeleteOptions' },
    });
    assert.deepEqual(sent(1).body, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { uid: 'u', resourceVersion: '4' },
      propagationPolicy: 'Foreground',
      gracePeriodSeconds: 0,
      dryRun: ['All'],
    });
    assert.deepEqual(sent(2).body, { apiVersion: 'v1', kind: 'DeleteOptions' });
    peer.route = (_req, res) => res.writeHead(404).end(statusBody(404, 'NotFound'));
    assert.equal(await widgets.delete(key), false);
    peer.route = (_req, res) => res.writeHead(409).end(statusBody(409, 'Conflict'));
    const conflict = await rejection(widgets.delete(key));
    assert.ok(conflict instanceof KubeApiError);
    assert.equal(conflict.reason, 'Conflict');
  });
});

describe('Resource collections, options and derived handles', () => {
  it('deleteCollection deletes what the selectors pick, with DeleteOptions', async () => {
    const widgets = client().resource<Widget>(WIDGETS);
    answer(200, { kind: 'Status', status: 'Success' });
    await widgets.deleteCollection({ namespace: 'ns', labelSelector: 'a=b', fieldSelector: 'f=g' });
    await widgets.deleteCollection({ propagationPolicy: 'Orphan', gracePeriodSeconds: 5, dryRun: true });
    await widgets.deleteCollection({ dryRun: false });
    assert.deepEqual(sent(0), {
      method: 'DELETE',
      url: '/apis/example.com/v2/namespaces/ns/widgets?labelSelector=a%3Db&fieldSelector=f%3Dg',
      contentType: 'application/json',
      accept: 'application/json',
      body: { apiVersion: 'v1', kind: 'DeleteOptions' },
    });
    assert.deepEqual(
      [sent(1).url, sent(1).body],
      [
        '/apis/example.com/v2/widgets',
        {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: 'Orphan',
          gracePeriodSeconds: 5,
          dryRun: ['All'],
        },
      ],
    );
    assert.deepEqual(sent(2).body, { apiVersion: 'v1', kind: 'DeleteOptions' });
    peer.route = (_req, res) => res.writeHead(403).end(statusBody(403, 'Forbidden'));
    assert.equal((await rejection(widgets.deleteCollection())).reason, 'Forbidden');
  });

  it('writes carry fieldValidation when asked', async () => {
    const widgets = client().resource<Widget>(WIDGETS);
    echo();
    await widgets.create({ metadata: { namespace: 'ns', name: 'w' } }, { fieldValidation: 'Strict' });
    await widgets.patch(
      { namespace: 'ns', name: 'w' },
      { merge: {} },
      { fieldValidation: 'Ignore', dryRun: true },
    );
    assert.deepEqual(
      [sent(0).url, sent(1).url],
      [
        '/apis/example.com/v2/namespaces/ns/widgets?fieldValidation=Strict',
        '/apis/example.com/v2/namespaces/ns/widgets/w?dryRun=All&fieldValidation=Ignore',
      ],
    );
  });

  it('withProtobuf keeps the subresource, and a subresource keeps the codec', async () => {
    const pods = client().resource<TestPod>(PODS);
    answer(200, { kind: 'Pod' });
    await pods.status.withProtobuf(TEST_POD_CODEC).update(testPod('ns', 'p'), { encoding: 'protobuf' });
    await pods.withProtobuf(TEST_POD_CODEC).status.update(testPod('ns', 'p'), { encoding: 'protobuf' });
    assert.deepEqual(
      peer.received.map(({ url, headers }) => [url, headers['content-type']]),
      [
        ['/prefix/api/v1/namespaces/ns/pods/p/status', PROTOBUF_MEDIA_TYPE],
        ['/prefix/api/v1/namespaces/ns/pods/p/status', PROTOBUF_MEDIA_TYPE],
      ],
    );
  });

  it('a background call waits while another request is on its way; a critical one does not', async () => {
    const clock = new FakeClock();
    const kube = new KubeClient(peer.kc, { rateLimit: false, clock });
    const configMaps = kube.resource(CONFIG_MAPS);
    const hanging: ServerResponse[] = [];
    peer.route = (req, res) => {
      if (req.url?.includes('/busy')) hanging.push(res);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    };
    const busy = configMaps.get({ namespace: 'ns', name: 'busy' });
    await peer.requestsArrived(1);
    const background = configMaps.get({ namespace: 'ns', name: 'later' }, { priority: 'background' });
    await configMaps.get({ namespace: 'ns', name: 'now' }, { priority: 'critical' });
    await settle();
    assert.deepEqual(
      peer.received.map(({ url }) => url.replace(/^.*\//, '')),
      ['busy', 'now'],
      'the background call is not sent yet',
    );
    for (const res of hanging) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    await busy;
    await clock.advance(BACKGROUND_QUIET_MS);
    await background;
    assert.equal(peer.received.at(-1)?.url.replace(/^.*\//, ''), 'later');
    await kube.close();
  });

  it('close drops the kept-alive connections: the next call opens a new one', async () => {
    const kube = client();
    const configMaps = kube.resource(CONFIG_MAPS);
    answer(200, {});
    const opened = peer.connections;
    await configMaps.get({ namespace: 'ns', name: 'a' });
    await configMaps.get({ namespace: 'ns', name: 'a' });
    assert.equal(peer.connections - opened, 1, 'kept alive');
    await kube.close();
    await configMaps.get({ namespace: 'ns', name: 'a' });
    assert.equal(peer.connections - opened, 2);
    await kube.close();
  });
});
