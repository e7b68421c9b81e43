/**
 * Re-scoping an informer to a shard selector (server-side sharding, KEP-5866): the watch stops, a list
 * with the new selector replaces the cache as a relist does, the watch goes on with the selector; no
 * selector at all means no request and an empty, synced cache.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, type KubeObject } from '@loopwright/client';
import { FakeClock, settle } from '@loopwright/core/testing';
import { InformerStoppedError } from './errors.ts';
import { objectKey } from './indexers.ts';
import { Informer } from './informer.ts';
import { configMap, recordingLogger, ScriptedClient } from './scripted-client.test-support.ts';

const EVEN = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const ODD = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";

function setup() {
  const clock = new FakeClock();
  const client = new ScriptedClient<KubeObject>();
  const events: string[] = [];
  const relists: string[] = [];
  const informer = new Informer<KubeObject>({
    resourceClient: client,
    clock,
    logger: recordingLogger(),
    backoff: { random: () => 0 },
    metrics: { relist: (resource) => relists.push(resource) },
    // The default: a re-scoped informer lists anyway, and this shows it does.
    initialSync: 'watch-list',
  });
  informer.addEventHandler({
    onAdd: (obj) => events.push(`add ${objectKey(obj)}`),
    onUpdate: (oldObj, newObj) =>
      events.push(
        `update ${objectKey(newObj)}@${oldObj.metadata?.resourceVersion ?? ''}->${newObj.metadata?.resourceVersion ?? ''}`,
      ),
    onDelete: (obj, { finalStateUnknown }) =>
      events.push(`delete ${objectKey(obj)}${finalStateUnknown ? ' unknown' : ''}`),
  });
  return { clock, client, events, relists, informer };
}

const names = (informer: Informer<KubeObject>) =>
  informer.lister
    .list()
    .map((obj) => obj.metadata?.name ?? '')
    .sort();

describe('Informer.rescope', () => {
  it('before start: selecting nothing syncs at once, empty, without any request', async () => {
    const t = setup();
    const rescoped = t.informer.rescope(undefined);
    t.informer.start();
    await t.informer.waitForSync();
    await rescoped;
    await settle();
    assert.deepEqual(names(t.informer), []);
    assert.equal(t.client.listCalls, 0);
    assert.equal(t.client.watches.length, 0);
    t.informer.stop();
  });

  it('lists with the new selector, replaces the cache as a relist does, then watches with it', async () => {
    const t = setup();
    void t.informer.rescope(EVEN);
    t.informer.start();
    t.client.scriptList({ items: [configMap('a', '1'), configMap('b', '2')], resourceVersion: '10' });
    await t.informer.waitForSync();
    const first = await t.client.watchNumber(0);
    assert.equal(first.request.shardSelector, EVEN);
    assert.equal(first.request.resourceVersion, '10');
    assert.equal(first.request.sendInitialEvents, undefined, 'a plain list, not a streaming one');
    t.events.length = 0;

    let resolved = false;
    const rescoped = t.informer.rescope(ODD).then(() => {
      resolved = true;
    });
    await settle();
    assert.equal(first.request.signal.aborted, true, 'the old watch stops');
    assert.equal(resolved, false, 'not before the new list is in the cache');
    t.client.scriptList({ items: [configMap('b', '3'), configMap('c', '4')], resourceVersion: '20' });
    await rescoped;
    assert.deepEqual(t.client.listSelectors, [EVEN, ODD]);
    assert.deepEqual(t.events.sort(), ['add default/c', 'delete default/a unknown', 'update default/b@2->3']);
    assert.deepEqual(names(t.informer), ['b', 'c']);
    const second = await t.client.watchNumber(1);
    assert.equal(second.request.shardSelector, ODD);
    assert.equal(second.request.resourceVersion, '20');
    assert.deepEqual(t.relists, [], 'a re-scope is not counted as a relist');
    t.informer.stop();
  });

  it('to nothing: empties the cache and sends nothing; back to a selector lists again', async () => {
    const t = setup();
    void t.informer.rescope(EVEN);
    t.informer.start();
    t.client.scriptList({ items: [configMap('a', '1')], resourceVersion: '10' });
    await t.client.watchNumber(0);
    await t.informer.rescope(undefined);
    assert.deepEqual(names(t.informer), []);
    assert.deepEqual(t.events, ['add default/a', 'delete default/a unknown']);
    await t.clock.advance(60_000);
    assert.equal(t.client.listCalls, 1);
    assert.equal(t.client.watches.length, 1);
    const rescoped = t.informer.rescope(ODD);
    t.client.scriptList({ items: [configMap('b', '5')], resourceVersion: '30' });
    await rescoped;
    assert.deepEqual(names(t.informer), ['b']);
    assert.equal((await t.client.watchNumber(1)).request.shardSelector, ODD);
    t.informer.stop();
  });

  it('retries a failed list with the reflector backoff, and resolves once one succeeds', async () => {
    const t = setup();
    void t.informer.rescope(EVEN);
    t.informer.start();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    await t.client.watchNumber(0);
    let resolved = false;
    const rescoped = t.informer.rescope(ODD).then(() => {
      resolved = true;
    });
    t.client.scriptList(
      KubeApiError.fromResponse(503, '', undefined, { method: 'GET', path: '/api/v1/configmaps' }),
    );
    await settle();
    assert.equal(resolved, false);
    t.client.scriptList({ items: [configMap('x', '7')], resourceVersion: '40' });
    await t.clock.advance(799);
    assert.equal(t.client.listCalls, 2, 'waits out the backoff');
    await t.clock.advance(1);
    await rescoped;
    assert.deepEqual(t.client.listSelectors, [EVEN, ODD, ODD]);
    assert.deepEqual(names(t.informer), ['x']);
    t.informer.stop();
  });

  it('a re-scope superseded before its list resolves with the later one', async () => {
    const t = setup();
    void t.informer.rescope(EVEN);
    t.informer.start();
    t.client.scriptList({ items: [], resourceVersion: '10' });
    await t.client.watchNumber(0);
    const first = t.informer.rescope(ODD);
    await settle();
    const second = t.informer.rescope(EVEN);
    t.client.scriptList({ items: [configMap('e', '9')], resourceVersion: '50' });
    await Promise.all([first, second]);
    assert.deepEqual(names(t.informer), ['e']);
    assert.equal((await t.client.watchNumber(1)).request.shardSelector, EVEN);
    t.informer.stop();
  });

  it('rejects a pending re-scope when the informer stops, and one asked after', async () => {
    const t = setup();
    t.informer.start();
    const pending = t.informer.rescope(EVEN);
    t.informer.stop();
    await assert.rejects(pending, InformerStoppedError);
    await assert.rejects(t.informer.rescope(ODD), InformerStoppedError);
  });
});
