/**
 * The third parties the controllers talk to, on loopback: the fake Hetzner Cloud API (cloud-node) and
 * the Mailgun peer, Mailgun's own mock behind an API-faithful front (mailgun-cluster). Both come from
 * @loopwright/testing, where the controllers' tests use them too.
 */
import { FAKE_HCLOUD_TOKEN, startFakeHcloud, startMailgunPeer, type FakeHcloud } from '@loopwright/testing';
import { randomBytes } from 'node:crypto';
import type { ThirdParties } from './controllers.ts';
import type { Shutdown } from './shutdown.ts';

export interface Fakes extends ThirdParties {
  /** The fake's state: the demo adds the server behind its Node there. */
  hcloudState: FakeHcloud;
  /** Mails the Mailgun peer accepted so far. */
  acceptedMails(): number;
}

export async function startFakes(shutdown: Shutdown): Promise<Fakes> {
  const [hcloud, mailgun] = await Promise.all([
    startFakeHcloud().then((fake) => {
      shutdown.defer('stop the fake Hetzner Cloud API', () => fake.close());
      return fake;
    }),
    startMailgunPeer({ apiKey: `key-${randomBytes(16).toString('hex')}` }).then((peer) => {
      shutdown.defer('stop the Mailgun peer', () => peer.stop());
      return peer;
    }),
  ]);
  return {
    hcloudState: hcloud,
    hcloud: { url: hcloud.url, token: FAKE_HCLOUD_TOKEN },
    mailgun: { url: mailgun.url, apiKey: mailgun.apiKey },
    acceptedMails: () => mailgun.accepted().length,
  };
}
