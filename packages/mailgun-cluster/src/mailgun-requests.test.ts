/**
 * `loopwright_mailgun_requests_total`: every request MailgunService makes to Mailgun, counted by how it
 * ended, against the Mailgun peer (Mailgun's own mock behind a front that injects faults).
 */
import { startMailgunPeer, type MailgunPeer } from '@loopwright/fakes/mailgun';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { clusterRequestMail } from './mail.ts';
import { MailgunService } from './mailgun.ts';
import { createMailgunMetrics } from './metrics.ts';

const DOMAIN = 'mg.example.com';
const API_KEY = 'key-requests';

const mail = clusterRequestMail({
  priority: 'Urgent',
  request: '3 nodes',
  requester: 'dev@example.com',
  clusterName: 'counted',
  recipient: 'ops@example.com',
  markers: { uid: 'u-1', attempt: 'a-1', object: 'MailgunCluster ns/counted' },
});

describe('MailgunService: each request counted by its outcome', () => {
  let peer: MailgunPeer;
  before(async () => {
    peer = await startMailgunPeer({ apiKey: API_KEY });
  });
  after(async () => {
    await peer.stop();
  });

  /** A service with a registry of its own; `requests()` is the counter's value by code. */
  function counted(options: { url?: string; apiKey?: string; timeoutMs?: number } = {}) {
    const registry = new Registry();
    const service = new MailgunService({
      domain: DOMAIN,
      apiKey: () => options.apiKey ?? API_KEY,
      url: options.url ?? peer.url,
      timeoutMs: options.timeoutMs ?? 5_000,
      metrics: createMailgunMetrics(registry),
    });
    const requests = async (): Promise<Record<string, number>> =>
      Object.fromEntries(
        ((await registry.getSingleMetric('loopwright_mailgun_requests_total')?.get())?.values ?? []).map(
          ({ labels, value }) => [String(labels.code), value],
        ),
      );
    return { service, requests };
  }

  it('a send: its answer, accepted or refused', async () => {
    const { service, requests } = counted();
    await service.send(mail);
    peer.injectFaults({ status: 500 }, { status: 429 });
    await assert.rejects(service.send(mail));
    await assert.rejects(service.send(mail));
    assert.deepEqual(await requests(), { '200': 1, '500': 1, '429': 1 });
    const unauthorized = counted({ apiKey: 'key-revoked' });
    await assert.rejects(unauthorized.service.send(mail));
    assert.deepEqual(await unauthorized.requests(), { '401': 1 });
  });

  it('a send without an answer (a reset connection, a timeout): <error>', async () => {
    const { service, requests } = counted({ timeoutMs: 300 });
    peer.injectFaults({ reset: true }, { hang: true });
    await assert.rejects(service.send(mail));
    await assert.rejects(service.send(mail));
    assert.deepEqual(await requests(), { '<error>': 2 });
  });

  it('an events lookup: one per page read; <error> when nothing answers', async () => {
    const { service, requests } = counted();
    await service.send(mail);
    // The sent mail is on the first page but carries another uid; the second page is the empty last one.
    assert.equal(await service.findAccepted('another-uid', new Date(Date.now() - 60_000)), undefined);
    assert.deepEqual(await requests(), { '200': 3 });
    const refused = counted({ url: 'http://127.0.0.1:1' });
    await assert.rejects(refused.service.findAccepted('u-1', new Date()));
    assert.deepEqual(await refused.requests(), { '<error>': 1 });
  });
});
