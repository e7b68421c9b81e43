/**
 * mailgun-cluster's options: its own; the standard ones (kubeconfig, leader election, servers, workers,
 * `--watch-namespace`...) come from the runtime. `--help` and the README table are generated from here.
 */
import {
  ConfigError,
  defineProgram,
  duration,
  httpUrl,
  option,
  secret,
  text,
  type ValueKind,
} from '@loopwright/runtime';

const DEFAULT_URL = 'https://api.mailgun.net';

const anyHttpUrl = httpUrl('https://api.eu.mailgun.net');
/**
 * mailgun.js appends `/v3/...` itself: a base URL that already ends in `/v3` would make every send a
 * 404, which would be taken for Mailgun refusing each object's mail. A path before it (a proxy's) is
 * kept.
 */
const mailgunBaseUrl: ValueKind<string> = {
  ...anyHttpUrl,
  expected: 'an http(s) URL without /v3, such as https://api.eu.mailgun.net',
  parse: (raw) => {
    const url = anyHttpUrl.parse(raw);
    return url === undefined || /\/v3$/i.test(new URL(url).pathname.replace(/\/+$/, '')) ? undefined : url;
  },
};

export const program = defineProgram({
  name: 'mailgun-cluster',
  packageJson: new URL('../package.json', import.meta.url),
  // Per controller: sends are slow and rare; one at a time keeps the Mailgun quota predictable.
  workers: 1,
  // Room for the slowest healthy reconcile: a few API calls and one send bounded by --mailgun-timeout
  // (30 s). A send cut short is safe: the claim recorded before it makes the next reconcile look the
  // mail up in Mailgun's events before it sends again, so nothing is sent twice.
  reconcileTimeout: '3m',
  namespaced: true,
  // Each mail is one object to claim and send: a replica needs only its share of them (`--sharding`).
  sharding: true,
  options: {
    mailgunDomain: option(
      text({
        placeholder: '<domain>',
        expected: 'a domain name such as mg.example.com',
        pattern: /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i,
      }),
      { flag: '--mailgun-domain', description: 'the Mailgun sending domain', required: true },
    ),
    mailgunApiKey: secret({
      fileFlag: '--mailgun-api-key-file',
      description: 'the Mailgun sending API key (redacted from every log line, Event and condition)',
      expected: 'an API key without whitespace',
      valid: (key) => /^\S+$/.test(key),
    }),
    mailRecipient: option(
      // A pragmatic address check; the CRD validates requesters the same way.
      text({
        placeholder: '<address>',
        expected: 'an email address',
        pattern: /^[^@\s<>"]+@[^@\s<>"]+\.[^@\s<>"]+$/,
      }),
      { flag: '--mail-recipient', description: 'the address every request mail goes to', required: true },
    ),
    mailgunUrl: option(mailgunBaseUrl, {
      flag: '--mailgun-url',
      description: 'Mailgun API base URL without /v3; EU accounts: https://api.eu.mailgun.net',
      default: DEFAULT_URL,
    }),
    mailgunTimeout: option(duration('1s', '10m'), {
      flag: '--mailgun-timeout',
      description: 'per-request client timeout',
      default: '30s',
    }),
    eventsSettleTime: option(duration('1s', '168h'), {
      // Mailgun recommends treating events younger than half an hour as possibly incomplete.
      flag: '--mailgun-events-settle-time',
      description: 'after a send attempt, when a missing "accepted" event means never sent; > the timeout',
      default: '30m',
    }),
    unauthorizedRetryDelay: option(duration('1s', '24h'), {
      flag: '--mailgun-unauthorized-retry-delay',
      description:
        'wait after a 401, 403 or 404 before trying again: an operator has to fix the key, domain or URL first',
      default: '5m',
    }),
  },
  check: ({ mailgunTimeout, eventsSettleTime }, setBy) => {
    if (eventsSettleTime <= mailgunTimeout)
      throw new ConfigError(
        // The timeout's bounds keep it below the default settle time: the settle time was set.
        setBy.eventsSettleTime ?? '--mailgun-events-settle-time',
        `the settle time (${eventsSettleTime} ms) must exceed the timeout (${mailgunTimeout} ms): ` +
          'a send still in flight must never look lost',
      );
  },
});
