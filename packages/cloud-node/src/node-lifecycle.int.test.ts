/**
 * The lifecycle controller on a real control plane against the fake Hetzner API (the set-up and why
 * Nodes of other files stay invisible: cloud-node-controllers.test-support.ts): Nodes of deleted
 * servers deleted, shutdown taints, the NotReady sweep, and the Nodes it must never touch.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  MONITOR_MS,
  SWEEP_MS,
  controllersTestbed,
  uninitialized,
} from './cloud-node-controllers.test-support.ts';
import { SHUTDOWN_TAINT } from './names.ts';
import type { Taint } from './node.ts';

describe('cloud-node controllers on a real control plane: lifecycle', () => {
  const bed = controllersTestbed();
  const { name, createNode, setReady, getNode, exists } = bed;

  it('a NotReady Node whose server is deleted is deleted; a Ready one never is', async () => {
    const a = bed.fake.servers.add().id;
    const b = bed.fake.servers.add().id;
    await createNode(name('gone'), { providerID: `hcloud://${a}`, ready: 'False' });
    await createNode(name('ready'), { providerID: `hcloud://${b}`, ready: 'True' });
    await sleep(4 * MONITOR_MS);
    assert.ok(await exists(name('gone')), 'not deleted while its server exists');
    bed.fake.servers.delete(a);
    bed.fake.servers.delete(b);
    await eventually(
      async () => {
        assert.equal(await exists(name('gone')), false);
      },
      { timeoutMs: 10_000 },
    );
    await sleep(10 * MONITOR_MS);
    assert.ok(await exists(name('ready')), 'a Ready Node is never deleted');
  });

  it('server off -> shutdown taint; back on and Ready -> untainted', async () => {
    const id = bed.fake.servers.add({ status: 'off' }).id;
    await createNode(name('off'), { providerID: `hcloud://${id}`, ready: 'False' });
    await eventually(async () => {
      assert.ok(
        (await getNode(name('off'))).spec?.taints?.some(
          (t) => t.key === SHUTDOWN_TAINT && t.effect === 'NoSchedule',
        ),
      );
    });
    bed.fake.servers.update(id, { status: 'running' });
    await setReady(name('off'), 'True');
    await eventually(async () => {
      assert.equal(
        (await getNode(name('off'))).spec?.taints?.some((t) => t.key === SHUTDOWN_TAINT),
        false,
      );
    });
  });

  it('many NotReady Nodes share one sweep per sweep period, never a lookup each; a deleted server’s Node still goes', async () => {
    const servers = Array.from({ length: 60 }, () => bed.fake.servers.add()); // with the others': 2 pages
    for (const [i, server] of servers.entries())
      await createNode(name(`many${i}`), { providerID: `hcloud://${server.id}`, ready: 'False' });
    // While they register, a few may be answered singly, until a sweep serves them all: counted from
    // the first sweep after the last Node, then observed for three sweep periods (a rate needs a window).
    const registered = Date.now();
    const isSweep = (r: { query: URLSearchParams }): boolean =>
      r.query.get('page') === '1' && !r.query.has('name');
    let since = 0;
    await eventually(() => {
      const first = bed.fake.requests.filter({ endpoint: '/v1/servers', since: registered }).find(isSweep);
      assert.ok(first, 'a sweep after the last Node registered');
      since = first.at + 1;
    });
    await sleep(3 * SWEEP_MS);
    const victim = servers[30];
    assert.ok(victim);
    const deletedAt = Date.now();
    bed.fake.servers.delete(victim.id);
    await eventually(async () => {
      assert.equal(await exists(name('many30')), false);
    });
    const sweeps = bed.fake.requests
      .filter({ endpoint: '/v1/servers', since })
      .filter(isSweep)
      .map((r) => r.at);
    const until = Date.now();
    assert.ok(sweeps.length >= 3, `${sweeps.length} sweeps`);
    // The directory starts sweeps at least a sweep period apart, but the fake sees each when its first
    // page arrives: on a busy machine one can arrive half a period late and the next on time, so two
    // arrivals may be closer than a period. Counted over the whole window instead: the sweeps that
    // arrived in it started in it or up to one period before (a delay under a period), so at most one
    // per period plus two, where a sweep per monitor period (5 per sweep period) or per lookup is far over.
    const allowed = Math.floor((until - since) / SWEEP_MS) + 2;
    assert.ok(
      sweeps.length <= allowed,
      `${sweeps.length} sweeps in ${until - since} ms (at most ${allowed}): ${sweeps.join(', ')}`,
    );
    // The only single lookups: the confirmation of the sweep's miss of the victim; and, when a sweep had
    // read page 1 as the victim went and read page 2 after, the server that slid from page 2 into page 1
    // under it (offset pagination, as the real API's), which that sweep missed too: found, and kept.
    const pages = bed.fake.requests
      .filter({ endpoint: '/v1/servers', since })
      .filter((r) => !r.query.has('name'));
    const straddled = pages.some(
      (r, i) =>
        r.query.get('page') === '1' &&
        r.at <= deletedAt &&
        pages[i + 1]?.query.get('page') === '2' &&
        (pages[i + 1]?.at ?? 0) >= deletedAt,
    );
    const lookups = bed.fake.requests
      .filter({ endpoint: '/v1/servers/{id}', since })
      .map((r) => `${r.path} ${r.status}`);
    const victimLookup = `/v1/servers/${victim.id} 404`;
    assert.deepEqual(
      lookups.filter((lookup) => lookup === victimLookup),
      [victimLookup],
    );
    const others = lookups.filter((lookup) => lookup !== victimLookup);
    assert.ok(
      others.length <= (straddled ? 1 : 0) && others.every((lookup) => lookup.endsWith(' 200')),
      `lookups: ${lookups.join(', ')}; a sweep straddled the deletion: ${straddled}`,
    );
    for (const [i, server] of servers.entries())
      if (server !== victim) assert.ok(await exists(name(`many${i}`)), `many${i} kept`);
  });

  it('foreign, Robot and malformed providerIDs are never touched', async () => {
    const shutdown: Taint = { key: SHUTDOWN_TAINT, effect: 'NoSchedule' };
    const foreign = [
      'aws:///eu-central-1a/i-0abc',
      'hrobot://1234',
      'hcloud://bm-1234',
      'hcloud://not-a-number',
    ];
    const before = new Map<string, string>();
    for (const [i, providerID] of foreign.entries()) {
      await createNode(name(`foreign${i}`), {
        providerID,
        ready: i % 2 === 0 ? 'False' : 'True',
        taints: i === 3 ? [uninitialized, shutdown] : [shutdown],
      });
      before.set(name(`foreign${i}`), (await getNode(name(`foreign${i}`))).metadata?.resourceVersion ?? '');
    }
    await sleep(15 * MONITOR_MS);
    for (const [nodeName, resourceVersion] of before) {
      const node = await getNode(nodeName);
      assert.equal(node.metadata?.resourceVersion, resourceVersion, `${nodeName} was modified`);
    }
  });

  it('Nodes outside the node selector are invisible to the controllers', async () => {
    await createNode(name('outside'), { providerID: 'hcloud://987654399', ready: 'False', inRun: false });
    await sleep(15 * MONITOR_MS);
    assert.ok(await exists(name('outside')));
  });
});
