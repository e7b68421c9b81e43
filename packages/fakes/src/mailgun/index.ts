export { ensureMailgunMockBinary, startMailgunMock, type MailgunMock } from './mock.ts';
export {
  startMailgunPeer,
  type AcceptedMail,
  type MailgunFault,
  type MailgunPeer,
  type MailgunPeerOptions,
} from './peer.ts';
