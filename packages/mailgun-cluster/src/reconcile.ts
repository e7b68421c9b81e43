/**
 * One reconcile of a MailgunCluster or MailgunMachine: find the owner, then perform the step `decide`
 * chose through the {@link RequestApi}. The order of writes is the exactly-once protocol (README):
 *
 *   1. claim: `status.sendAttempt`, conditional on the resourceVersion the decision was made from, so
 *      of all workers and replicas that saw that version exactly one sends;
 *   2. send;
 *   3. record the message id in status (unconditional: the mail is out), then in the annotation.
 *
 * Every other write is conditional too: the cache may lag behind the controller's own last write, and
 * a decision from an older version must never overwrite a newer one (turn a recorded Rejected back into
 * ConfirmingDelivery, which would send again). A write that loses (409 Conflict) fails the reconcile,
 * which the queue retries with backoff once the cache has caught up.
 */
import { randomUUID } from 'node:crypto';
import {
  apiVersionOf,
  isConflict,
  type ObjectKey,
  type ObjectReference,
  type ReconcileResult,
  type Reconciler,
  type ResourceType,
} from '@loopwright/runtime';
import type { Logger } from 'winston';
import type { RequestApi } from './api.ts';
import { decide, type Step } from './decide.ts';
import type { RequestMail, SendMarkers } from './mail.ts';
import { MISCONFIGURED_HINT, MailgunError } from './mailgun.ts';
import { EventReason } from './reasons.ts';
import {
  MESSAGE_ID_ANNOTATION,
  capiOwnerName,
  type CapiObject,
  type RequestObject,
  type SendAttempt,
} from './resource.ts';
import {
  acceptedCondition,
  confirmingDeliveryCondition,
  failureCondition,
  heldRejectionCondition,
  pausedCondition,
  requestConditions,
  sendingCondition,
  statusPatch,
  type Observed,
  type StatusChange,
} from './status.ts';

/** What differs between MailgunCluster and MailgunMachine. */
export interface RequestKind<T extends RequestObject> {
  /** MailgunClusters or MailgunMachines: the resource whose objects are reconciled and written. */
  resource: ResourceType;
  /** The Cluster API owner that must exist before anything happens. */
  ownerKind: 'Cluster' | 'Machine';
  /** The owner object, from the cache. */
  getOwner(namespace: string | undefined, name: string): CapiObject | undefined;
  /** The Cluster whose `spec.paused` pauses this object (for a MailgunCluster the owner itself). */
  clusterOf(namespace: string | undefined, owner: CapiObject): CapiObject | undefined;
  mail(object: T, owner: CapiObject, recipient: string, markers: SendMarkers): RequestMail;
  /** Whoever fulfils the request filled in the spec (endpoint, providerID): with the mail accepted, provisioned. */
  fulfilled(object: T): boolean;
}

export interface RequestReconcilerOptions<T extends RequestObject> {
  kind: RequestKind<T>;
  api: RequestApi;
  /** Where every request mail goes. */
  recipient: string;
  /** How old an attempt must be before a missing `accepted` event means it was never sent. */
  eventsSettleMs: number;
  /** The wait after a 401 before the next send: an operator has to fix the key first. */
  unauthorizedRetryMs: number;
  /** Default: the system clock. */
  now?: () => Date;
  /**
   * Called as a send passes each of its {@link SendCheckpoint}s. The crash tests SIGKILL the process
   * there to prove exactly-once delivery across a real crash; production passes none.
   */
  sendCheckpoint?: (checkpoint: SendCheckpoint) => void;
}

/** The points of a send between which a crash must not cost a second mail, or lose the first. */
export type SendCheckpoint = 'before-send' | 'after-send' | 'after-status-patch';

/** The events.k8s.io action of every Event this controller records. */
const SEND_ACTION = 'SendRequestMail';

/** The failures only an operator can mend: their Event reason, the note's hint, the log line. */
const OPERATOR_FAILURES = {
  unauthorized: {
    reason: EventReason.Unauthorized,
    hint: "check the API key (MAILGUN_API_KEY, or the file MAILGUN_API_KEY_FILE names: the chart's Secret) and the domain",
    message: 'Mailgun rejected the API key; retrying slowly',
  },
  misconfigured: {
    reason: EventReason.Misconfigured,
    hint: MISCONFIGURED_HINT,
    message: "Mailgun refused the controller's configuration; retrying slowly",
  },
} as const;

export function createRequestReconciler<T extends RequestObject>(
  options: RequestReconcilerOptions<T>,
): Reconciler<T> {
  const { kind } = options;
  const now = options.now ?? (() => new Date());
  return async ({ object, namespace, name, log, signal }) => {
    // Deleted: nothing to undo, a mail cannot be recalled.
    if (object === undefined) return;
    const ownerName = capiOwnerName(object, kind.ownerKind);
    if (ownerName === undefined) {
      // The ownerReference's update reconciles again.
      log.info(`waiting for ${kind.ownerKind} controller to set OwnerRef`);
      return;
    }
    const owner = kind.getOwner(namespace, ownerName);
    if (owner === undefined) {
      // The owner's informer event reconciles this object again once the owner is in the cache.
      log.info(`waiting for owner ${kind.ownerKind} ${ownerName} to appear`);
      return;
    }
    const step = decide(object, kind.clusterOf(namespace, owner), now(), options.eventsSettleMs);
    const key = { namespace, name };
    // Every line about performing the step names it.
    const stepLog = log.child({ action: step.action });
    return new Reconcile(options, now, { object, owner, key, log: stepLog, signal }).perform(step);
  };
}

interface Subject<T extends RequestObject> {
  /** The cached object the decision was made from. */
  object: T;
  owner: CapiObject;
  key: ObjectKey;
  log: Logger;
  signal: AbortSignal;
}

/** Performs one decided step on one object. */
class Reconcile<T extends RequestObject> {
  readonly #options: RequestReconcilerOptions<T>;
  readonly #resource: ResourceType;
  readonly #api: RequestApi;
  readonly #now: () => Date;
  readonly #subject: Subject<T>;
  readonly #observed: Observed;
  readonly #log: Logger;

  constructor(options: RequestReconcilerOptions<T>, now: () => Date, subject: Subject<T>) {
    this.#options = options;
    this.#resource = options.kind.resource;
    this.#api = options.api;
    this.#now = now;
    this.#subject = subject;
    this.#log = subject.log;
    this.#observed = {
      generation: subject.object.metadata?.generation,
      fulfilled: options.kind.fulfilled(subject.object),
    };
  }

  async perform(step: Step): Promise<ReconcileResult> {
    const { object } = this.#subject;
    switch (step.action) {
      case 'pause':
        this.#log.info('reconciliation is paused');
        await this.#writeStatus(object, { conditions: [pausedCondition(this.#observed)], paused: true });
        return;
      case 'record':
        await this.#record(step.messageID);
        return;
      case 'holdRejected':
        await this.#writeStatus(object, {
          conditions: requestConditions(
            heldRejectionCondition(object.status?.conditions, this.#observed),
            this.#observed,
          ),
        });
        return;
      case 'lookup':
        return this.#lookup(step);
      case 'claim':
        return this.#claimAndSend();
    }
  }

  async #lookup(step: Extract<Step, { action: 'lookup' }>): Promise<ReconcileResult> {
    const { object, signal } = this.#subject;
    const { attempt } = step;
    const found = await this.#api.findAcceptedMail(object.metadata?.uid ?? '', step.since, signal);
    if (found !== undefined) {
      this.#log.info('found the request mail of an unrecorded attempt through the events API', {
        attempt: attempt.id,
        messageID: found,
      });
      await this.#record(found);
      return;
    }
    if (step.ifNotFound === 'wait') {
      this.#log.info('send attempt without a recorded message id; waiting before concluding it was lost', {
        attempt: attempt.id,
        retryAfterMs: step.retryAfterMs,
      });
      await this.#writeStatus(object, {
        conditions: requestConditions(confirmingDeliveryCondition(attempt, this.#observed), this.#observed),
      });
      return { requeueAfterMs: step.retryAfterMs };
    }
    this.#log.warn('send attempt settled without any accepted mail in Mailgun events; sending again', {
      attempt: attempt.id,
    });
    return this.#claimAndSend();
  }

  /** Makes status and annotation agree on an accepted mail's id. */
  async #record(messageID: string): Promise<void> {
    const { object, key } = this.#subject;
    await this.#writeStatus(object, {
      conditions: requestConditions(acceptedCondition(messageID, this.#observed), this.#observed, messageID),
      ...(object.status?.messageID === messageID ? {} : { fields: { messageID } }),
    });
    if (object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION] !== messageID)
      await this.#api.annotateMessageID(this.#resource, key, messageID);
  }

  async #claimAndSend(): Promise<ReconcileResult> {
    const { object, owner, key, log } = this.#subject;
    const { kind } = this.#options;
    const checkpoint = this.#options.sendCheckpoint ?? (() => undefined);
    const attempt: SendAttempt = { id: randomUUID(), startedAt: this.#now().toISOString() };
    let claimed: T;
    try {
      claimed = await this.#api.patchStatus<T>(
        this.#resource,
        key,
        statusPatch(
          object.status,
          {
            conditions: requestConditions(sendingCondition(attempt, this.#observed), this.#observed),
            fields: { sendAttempt: attempt },
          },
          this.#observed,
          this.#now(),
        ),
        object.metadata?.resourceVersion ?? '',
      );
    } catch (error) {
      if (isConflict(error))
        log.debug('another writer changed the object first; not sending', { attempt: attempt.id });
      throw error;
    }
    log.info('claimed a send attempt', { attempt: attempt.id });
    const mail = kind.mail(object, owner, this.#options.recipient, {
      uid: object.metadata?.uid ?? '',
      attempt: attempt.id,
      object: `${kind.resource.kind} ${key.namespace}/${key.name}`,
    });

    checkpoint('before-send');
    let messageID: string;
    try {
      messageID = await this.#api.sendMail(mail);
    } catch (error) {
      return this.#failed(error, attempt, claimed);
    }
    checkpoint('after-send');
    log.info('Mailgun accepted the request mail', { attempt: attempt.id, messageID });
    await this.#writeStatus(
      claimed,
      {
        conditions: requestConditions(
          acceptedCondition(messageID, this.#observed),
          this.#observed,
          messageID,
        ),
        fields: { messageID },
      },
      { unconditional: true },
    );
    checkpoint('after-status-patch');
    await this.#api.annotateMessageID(this.#resource, key, messageID);
    this.#api.event(this.#regarding(), {
      type: 'Normal',
      reason: EventReason.RequestSent,
      action: SEND_ACTION,
      note: `Mailgun accepted the request mail ${messageID}`,
    });
  }

  async #failed(error: unknown, attempt: SendAttempt, claimed: T): Promise<ReconcileResult> {
    if (!(error instanceof MailgunError)) throw error;
    const log = this.#log;
    // A mail that provably did not go out releases its attempt, so the next try need not wait for the
    // events to settle. Conditional on the claim's version: if anything changed since, the attempt
    // stays and the lookup decides (slower, never wrong).
    try {
      await this.#writeStatus(claimed, {
        conditions: requestConditions(failureCondition(error, this.#observed), this.#observed),
        ...(error.maybeSent ? {} : { fields: { sendAttempt: null } }),
      });
    } catch (patchError) {
      if (!isConflict(patchError)) throw patchError;
      log.info('the object changed since the claim; leaving the attempt to the events lookup', {
        attempt: attempt.id,
      });
    }
    switch (error.kind) {
      case 'rejected':
        this.#api.event(this.#regarding(), {
          type: 'Warning',
          reason: EventReason.Rejected,
          action: SEND_ACTION,
          note: error.message,
        });
        log.warn('Mailgun rejected the request mail; not retrying until the spec changes', {
          reason: EventReason.Rejected,
          error: error.message,
          statusCode: error.statusCode,
        });
        return;
      case 'unauthorized':
      case 'misconfigured': {
        // An operator must fix the key or the configuration, for every object at once: tried again
        // slowly, and no edit of this object is waited for.
        const { reason, hint, message } = OPERATOR_FAILURES[error.kind];
        const retryAfterMs = this.#options.unauthorizedRetryMs;
        this.#api.event(this.#regarding(), {
          type: 'Warning',
          reason,
          action: SEND_ACTION,
          note: `${error.message}: ${hint}`,
        });
        log.error(message, { reason, error: error.message, statusCode: error.statusCode, retryAfterMs });
        return { requeueAfterMs: retryAfterMs };
      }
      case 'retryable':
        // Logged and counted as a failed reconcile; the queue's backoff holds the sends apart.
        throw error;
    }
  }

  /**
   * Writes the status `change` gives `base` unless it would change nothing. Conditional on `base`'s
   * resourceVersion unless `unconditional`.
   */
  async #writeStatus(base: T, change: StatusChange, { unconditional = false } = {}): Promise<void> {
    const status = statusPatch(base.status, change, this.#observed, this.#now());
    if (status === undefined) return;
    await this.#api.patchStatus<T>(
      this.#resource,
      this.#subject.key,
      status,
      unconditional ? undefined : (base.metadata?.resourceVersion ?? ''),
    );
  }

  #regarding(): ObjectReference {
    const { object, key } = this.#subject;
    return {
      apiVersion: apiVersionOf(this.#resource),
      kind: this.#resource.kind,
      namespace: key.namespace ?? '',
      name: key.name,
      uid: object.metadata?.uid ?? '',
    };
  }
}
