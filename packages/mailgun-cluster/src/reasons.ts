/** The names this controller writes for machines to read: Event reasons, condition types and reasons. */

/** Reasons of the Events (`events.k8s.io/v1`) the controller records about a MailgunCluster/MailgunMachine. */
export const EventReason = {
  /** Normal: Mailgun accepted the request mail; the note names its message id. */
  RequestSent: 'RequestSent',
  /** Warning: Mailgun refused the mail for its input; the note carries Mailgun's answer. */
  Rejected: 'Rejected',
  /** Warning: Mailgun answered 401: the API key or domain is wrong. */
  Unauthorized: 'Unauthorized',
  /** Warning: Mailgun answered 403 or 404: the domain, URL or account is wrong; the note carries its answer. */
  Misconfigured: 'Misconfigured',
} as const;

export const ConditionType = {
  /** Mirrors `initialization.provisioned` (Cluster API copies a `Ready` condition to the Cluster). */
  Ready: 'Ready',
  /** Cluster API's pause: `Cluster.spec.paused` or the `cluster.x-k8s.io/paused` annotation. */
  Paused: 'Paused',
  /** Where the request mail is: sending, accepted, refused. */
  RequestSent: 'RequestSent',
} as const;

/** Reasons of the `RequestSent` condition; a `Ready=False` condition repeats the reason until a mail is accepted. */
export const RequestSentReason = {
  Accepted: 'Accepted',
  Sending: 'Sending',
  ConfirmingDelivery: 'ConfirmingDelivery',
  Rejected: 'Rejected',
  Unauthorized: 'Unauthorized',
  Misconfigured: 'Misconfigured',
  MailgunUnavailable: 'MailgunUnavailable',
} as const;

/** Reasons of the `Ready` condition once the mail was accepted. */
export const ReadyReason = {
  Provisioned: 'Provisioned',
  WaitingForFulfilment: 'WaitingForFulfilment',
} as const;

/** Reasons of the `Paused` condition. */
export const PausedReason = {
  Paused: 'Paused',
  NotPaused: 'NotPaused',
} as const;
