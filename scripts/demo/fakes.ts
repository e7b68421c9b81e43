/**
 * The third parties the controllers talk to: the fake Hetzner Cloud API (cloud-node) and the Mailgun
 * peer, Mailgun's own mock behind an API-faithful front (mailgun-cluster). Both come from
 * @loopwright/fakes, where the controllers' tests use them too. They listen on loopback, or, when the
 * controllers run as pods of a node, on the host's address on the node bridge: the only one pods reach.
 */
import { FAKE_HCLOUD_TOKEN, startFakeHcloud, type FakeHcloud } from '@loopwright/fakes/hcloud';
import { startMailgunPeer } from '@loopwright/fakes/mailgun';
import { randomBytes } from 'node:crypto';
import type { ThirdParties } from './controllers.ts';
import type { Shutdown } from './shutdown.ts';

export interface Fakes extends ThirdParties {
  /** The fake's state: the demo adds the server behind its Node there. */
  hcloudState: FakeHcloud;
  /** The message ids of the mails the Mailgun peer accepted so far. */
  acceptedMailIds(): string[];
}

export async function startFakes(shutdown: Shutdown, host = '127.0.0.1'): Promise<Fakes> {
  const [hcloud, mailgun] = await Promise.all([
    startFakeHcloud({ host }).then((fake) => {
      shutdown.defer('stop the fake Hetzner Cloud API', () => fake.close());
      return fake;
    }),
    startMailgunPeer({ apiKey: `key-${randomBytes(16).toString('hex')}`, host }).then((peer) => {
      shutdown.defer('stop the Mailgun peer', () => peer.stop());
      return peer;
    }),
  ]);
  return {
    hcloudState: hcloud,
    hcloud: { url: hcloud.url, token: FAKE_HCLOUD_TOKEN },
    mailgun: { url: mailgun.url, apiKey: mailgun.apiKey },
    acceptedMailIds: () => mailgun.accepted().map((mail) => mail.id),
  };
}
