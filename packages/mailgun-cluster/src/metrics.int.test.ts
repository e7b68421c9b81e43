/**
 * mailgun-cluster's own metric families (metrics.ts), as the controller process serves them on
 * /metrics, after real reconciles against a real API server, Cluster API's core manager and the Mailgun
 * peer.
 */
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  API_KEY,
  CAPI_WAIT,
  controllerEnv,
  controllerSuite,
  expectExactlyOneMail,
  type Context,
} from './controller-suite.test-support.ts';

const suite = controllerSuite();

/** The value of each sample line of an exposition, by its series (`name{labels}`). */
function samples(exposition: string): Map<string, number> {
  return new Map(
    exposition
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => {
        const space = line.lastIndexOf(' ');
        return [line.slice(0, space), Number(line.slice(space + 1))];
      }),
  );
}

describe('mailgun-cluster metrics', () => {
  let ctx: Context;
  let scrape: () => Promise<Map<string, number>>;
  before(async () => {
    ctx = await suite.setup('mailgun-metrics');
    const controller = await suite.run(
      controllerEnv(ctx.peer, ctx.namespace.name, {
        // One address: one server for the probes and /metrics, on a free port it logs.
        HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
        METRICS_BIND_ADDRESS: '127.0.0.1:0',
      }),
    );
    const port = controller
      .output()
      .split('\n')
      .map((line) => (line.startsWith('{') ? (JSON.parse(line) as { port?: unknown }) : {}))
      .find((entry) => typeof entry.port === 'number')?.port;
    assert.ok(typeof port === 'number', controller.output());
    scrape = async () => samples(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  });

  it('a key Mailgun refuses: 401s counted, the cluster unsent; the key fixed: its mail, a 200, none unsent', async () => {
    const { peer, objects } = ctx;
    // The peer now expects another key than the controller's: every send is answered 401.
    peer.setApiKey('key-rotated-elsewhere');
    await objects.createPair('counted');
    await eventually(async () => {
      const metrics = await scrape();
      assert.ok((metrics.get('loopwright_mailgun_requests_total{code="401"}') ?? 0) >= 1);
      assert.equal(metrics.get('loopwright_mailgun_clusters_unsent'), 1);
    }, CAPI_WAIT);
    peer.setApiKey(API_KEY);
    await expectExactlyOneMail(peer, objects, 'counted');
    await eventually(async () => {
      const metrics = await scrape();
      assert.ok((metrics.get('loopwright_mailgun_requests_total{code="200"}') ?? 0) >= 1);
      assert.equal(metrics.get('loopwright_mailgun_clusters_unsent'), 0);
    }, CAPI_WAIT);
  });
});
