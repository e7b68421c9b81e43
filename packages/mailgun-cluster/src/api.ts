/**
 * Every call the reconciler makes, behind one interface so its unit tests record them without an API
 * server or Mailgun: merge patches of the request object (status, the message-id annotation), Events,
 * and Mailgun's send and events lookup. Reads come from the informer cache, not from here.
 *
 * The writes are JSON merge patches, not server-side apply. A status write is decided from the cached
 * status and conditional on its resourceVersion (the exactly-once protocol, reconcile.ts), so applying
 * would not spare the read-modify-write; and an apply removes only the fields its own field manager
 * applied, so an attempt an earlier version claimed with a merge patch would never be released by
 * leaving it out. The annotation is one key: its merge patch is the smallest write there is.
 */
import type {
  EventInput,
  EventRecorder,
  KubeClient,
  KubeObject,
  ObjectKey,
  ObjectReference,
  ResourceType,
} from '@loopwright/runtime';
import type { RequestMail } from './mail.ts';
import type { MailgunService } from './mailgun.ts';
import { MESSAGE_ID_ANNOTATION } from './resource.ts';

export interface RequestApi {
  /**
   * Merge-patches the status subresource of the object `key` names and resolves with the object as
   * written. With `resourceVersion`, only if the object still has it: otherwise it rejects with a 409
   * Conflict.
   */
  patchStatus<T extends KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    status: object,
    resourceVersion: string | undefined,
  ): Promise<T>;
  /** Copies the message id into {@link MESSAGE_ID_ANNOTATION} (unconditional). */
  annotateMessageID(type: ResourceType, key: ObjectKey, messageID: string): Promise<void>;
  /** Records an Event; returns at once and never throws: a diagnostic must never fail a reconcile. */
  event(regarding: ObjectReference, event: EventInput): void;
  /**
   * Sends the mail and resolves with Mailgun's message id (`<...@domain>`); rejects with MailgunError.
   * Not abortable: an interrupted send would leave it unknown whether the mail went out.
   */
  sendMail(mail: RequestMail): Promise<string>;
  /**
   * The id of a mail Mailgun accepted carrying the object's `uid` (any attempt) since `since`, or
   * undefined when its events show none (yet). Rejects with MailgunError.
   */
  findAcceptedMail(uid: string, since: Date, signal: AbortSignal): Promise<string | undefined>;
}

/**
 * The Kubernetes side of the real {@link RequestApi}: handles of the Manager's rate-limited client and
 * its Events recorder (aggregation, spam filter). The writes are not tied to a reconcile's abort
 * signal: a mail's id must be recorded even while the process shuts down.
 */
export class RuntimeWriter {
  readonly #client: KubeClient;
  readonly #recorder: Pick<EventRecorder, 'event'>;

  constructor(client: KubeClient, recorder: Pick<EventRecorder, 'event'>) {
    this.#client = client;
    this.#recorder = recorder;
  }

  patchStatus<T extends KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    status: object,
    resourceVersion: string | undefined,
  ): Promise<T> {
    return this.#client.resource<T>(type).status.patch(key, { merge: { status } }, { resourceVersion });
  }

  async annotateMessageID(type: ResourceType, key: ObjectKey, messageID: string): Promise<void> {
    await this.#client
      .resource(type)
      .patch(key, { merge: { metadata: { annotations: { [MESSAGE_ID_ANNOTATION]: messageID } } } });
  }

  event(regarding: ObjectReference, event: EventInput): void {
    this.#recorder.event(regarding, event);
  }
}

/** The real {@link RequestApi}: Kubernetes through `kube`, Mailgun through `mailgun`. */
export function requestApi(kube: RuntimeWriter, mailgun: MailgunService): RequestApi {
  return {
    patchStatus: (type, key, status, resourceVersion) => kube.patchStatus(type, key, status, resourceVersion),
    annotateMessageID: (type, key, messageID) => kube.annotateMessageID(type, key, messageID),
    event: (regarding, event) => {
      kube.event(regarding, event);
    },
    sendMail: (mail) => mailgun.send(mail),
    findAcceptedMail: (uid, since, signal) => mailgun.findAccepted(uid, since, signal),
  };
}
