/**
 * The Mailgun peer, spoken to over raw HTTP as Mailgun's API documents it (not through mailgun.js or a
 * controller): what the front adds to Mailgun's own mock (authentication, the events API with its
 * filters and paging, faults) and that every accepted mail really went through the mock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startMailgunPeer, type MailgunPeer } from './index.ts';

const DOMAIN = 'mg.example.test';

describe('Mailgun peer', () => {
  let peer: MailgunPeer;
  before(async () => {
    peer = await startMailgunPeer({ apiKey: 'key-right' });
  });
  after(() => peer.stop());

  const authorization = (key = peer.apiKey) => `Basic ${Buffer.from(`api:${key}`).toString('base64')}`;

  const send = (subject: string, fields: Record<string, string> = {}, key?: string): Promise<Response> => {
    const form = new FormData();
    const all = { from: 'ops@example.test', to: 'user@example.test', subject, text: 'hello', ...fields };
    for (const [name, value] of Object.entries(all)) form.append(name, value);
    return fetch(`${peer.url}/v3/${DOMAIN}/messages`, {
      method: 'POST',
      headers: { authorization: authorization(key) },
      body: form,
    });
  };

  const events = async (
    query: string,
  ): Promise<{ items: { message: { headers: { subject: string } } }[] }> => {
    const response = await fetch(`${peer.url}/v3/${DOMAIN}/events?${query}`, {
      headers: { authorization: authorization() },
    });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as { items: { message: { headers: { subject: string } } }[] };
  };
  const subjectsOf = (page: { items: { message: { headers: { subject: string } } }[] }) =>
    page.items.map((item) => item.message.headers.subject);

  it('refuses a wrong API key as Mailgun does (401 Forbidden), and nothing reaches the mock', async () => {
    const before = peer.messageRequests();
    const response = await send('wrong key', {}, 'key-wrong');
    assert.equal(response.status, 401);
    assert.equal(await response.text(), 'Forbidden');
    assert.equal(peer.messageRequests(), before);
    assert.ok(!(await peer.mockAccepted(DOMAIN)).some((mail) => mail.subject === 'wrong key'));
  });

  it('passes a mail to the mock and records the tags, user variables and headers the mock forgets', async () => {
    const response = await send('tagged', { 'o:tag': 'welcome', 'v:cluster': 'alpha', 'h:X-Trace': 't-1' });
    assert.equal(response.status, 200);
    const { id } = (await response.json()) as { id: string };
    const mail = peer.accepted().find((m) => m.id === id);
    assert.deepEqual(mail && { tags: mail.tags, userVariables: mail.userVariables, headers: mail.headers }, {
      tags: ['welcome'],
      userVariables: { cluster: 'alpha' },
      headers: { 'X-Trace': 't-1' },
    });
    assert.ok((await peer.mockAccepted(DOMAIN)).some((m) => m.subject === 'tagged'));
  });

  it('serves accepted events filtered by tag and message id, in pages that end in an empty one', async () => {
    const ids: string[] = [];
    for (const subject of ['page-1', 'page-2', 'page-3']) {
      const response = await send(subject, { 'o:tag': 'paged' });
      ids.push(((await response.json()) as { id: string }).id);
    }
    assert.deepEqual(subjectsOf(await events('tags=paged&ascending=yes')), ['page-1', 'page-2', 'page-3']);
    assert.deepEqual(subjectsOf(await events(`message-id=${encodeURIComponent(ids[1] ?? '')}`)), ['page-2']);

    const seen: string[] = [];
    let page = (await (
      await fetch(`${peer.url}/v3/${DOMAIN}/events?tags=paged&ascending=yes&limit=2`, {
        headers: { authorization: authorization() },
      })
    ).json()) as { items: { message: { headers: { subject: string } } }[]; paging: { next: string } };
    for (let pages = 0; page.items.length > 0; pages++) {
      assert.ok(pages < 3, 'paging never ended');
      seen.push(...subjectsOf(page));
      page = (await (
        await fetch(page.paging.next, { headers: { authorization: authorization() } })
      ).json()) as typeof page;
    }
    assert.deepEqual(seen, ['page-1', 'page-2', 'page-3']);

    const tooMany = await fetch(`${peer.url}/v3/${DOMAIN}/events?limit=301`, {
      headers: { authorization: authorization() },
    });
    assert.equal(tooMany.status, 400);
  });

  it('hides accepted events for the configured delay, as Mailgun reports them late', async () => {
    peer.setEventDelayMs(60_000);
    try {
      assert.equal((await send('late', { 'o:tag': 'late' })).status, 200);
      assert.deepEqual(subjectsOf(await events('tags=late')), []);
    } finally {
      peer.setEventDelayMs(0);
    }
    assert.deepEqual(subjectsOf(await events('tags=late')), ['late']);
  });

  it('answers an injected fault instead of the mock, or after it accepted the mail (an ambiguous failure)', async () => {
    peer.injectFaults({ status: 503 }, { status: 500, afterAccept: true }, { reset: true });
    assert.equal((await send('refused')).status, 503);
    assert.equal((await send('sent anyway')).status, 500);
    await assert.rejects(send('reset'));
    const subjects = (await peer.mockAccepted(DOMAIN)).map((mail) => mail.subject);
    assert.ok(!subjects.includes('refused'), 'a fault before acceptance sends nothing');
    assert.ok(subjects.includes('sent anyway'), 'a fault after acceptance still sent the mail');
    assert.ok(!subjects.includes('reset'));
    assert.equal((await send('after the faults')).status, 200, 'faults are used up in order');
  });
});
