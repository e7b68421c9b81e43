/**
 * One reconcile of a MailgunCluster or MailgunMachine: find the owner, honour pause, then send the
 * request mail exactly once (see decide.ts and the README) and report the Cluster API contract fields.
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '@loopwright/informer';
import type { ObjectMeta } from '@loopwright/informer';
import { groupOf, type ReconcileRequest, type ReconcileResult } from '@loopwright/runtime';
import {
  ConditionType,
  findCondition,
  sameConditions,
  setCondition,
  type Condition,
  type ConditionInput,
} from './conditions.ts';
import { MESSAGE_ID_ANNOTATION, RequestReason, decide, type SendAttempt } from './decide.ts';
import { isConflict, type KubeWriter, type ObjectRef } from './kube.ts';
import type { RequestMail, SendMarkers } from './mail.ts';
import { MailgunError, type MailService } from './mailgun.ts';
import { SendBackoff } from './send-backoff.ts';
import { crashPoint } from './test-hooks.ts';

export const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
export const INFRA_VERSION = 'v1alpha1';
export const CAPI_GROUP = 'cluster.x-k8s.io';
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

/** What both kinds share: the fields reconcile reads and writes. */
export interface RequestObject extends KubeObject {
  metadata?: ObjectMeta;
  spec: { priority: string; request: string; requester: string };
  status?: {
    messageID?: string;
    sendAttempt?: SendAttempt;
    observedGeneration?: number;
    conditions?: Condition[];
    initialization?: { provisioned?: boolean };
    ready?: boolean;
  };
}

/** A Cluster API object as far as this controller reads it (Cluster or Machine). */
export interface CapiObject extends KubeObject {
  spec?: {
    paused?: boolean;
    clusterName?: string;
    infrastructureRef?: { apiGroup?: string; apiVersion?: string; kind?: string; name?: string };
  };
}

export interface RequestKind<T extends RequestObject> {
  kind: 'MailgunCluster' | 'MailgunMachine';
  plural: string;
  /** The owner that must exist before anything happens: `Cluster` or `Machine`. */
  ownerKind: 'Cluster' | 'Machine';
  /** The owner object from the cache. */
  getOwner(namespace: string, name: string): CapiObject | undefined;
  /** The Cluster whose `spec.paused` pauses this object (the owner itself for MailgunCluster). */
  clusterOf(namespace: string, owner: CapiObject): CapiObject | undefined;
  mail(object: T, owner: CapiObject, recipient: string, markers: SendMarkers): RequestMail;
  /** Whoever fulfils the request filled in the spec (endpoint, providerID): with the mail accepted, provisioned. */
  fulfilled(object: T): boolean;
}

export interface ReconcilerDeps {
  mail: MailService;
  kube: KubeWriter;
  recipient: string;
  eventsSettleMs: number;
  unauthorizedRetryMs: number;
  now?: () => Date;
}

/** `requeueAfterMs` while waiting for an attempt to settle or a 401 to be fixed. */
export type RequestReconciler<T extends RequestObject> = (
  request: ReconcileRequest<T>,
) => Promise<ReconcileResult>;

/** How far before the object's creation the events lookup starts: clock skew between the API server and Mailgun. */
const LOOKUP_SKEW_MS = 10 * 60_000;

export function requestReconciler<T extends RequestObject>(
  kind: RequestKind<T>,
  deps: ReconcilerDeps,
): RequestReconciler<T> {
  const now = deps.now ?? (() => new Date());
  const backoff = new SendBackoff();
  const regardingOf = (object: T) => ({
    apiVersion: `${INFRA_GROUP}/${INFRA_VERSION}`,
    kind: kind.kind,
    namespace: object.metadata?.namespace ?? '',
    name: object.metadata?.name ?? '',
    uid: object.metadata?.uid ?? '',
  });

  const reconcile: RequestReconciler<T> = async ({ key, object, namespace, name, log, signal }) => {
    if (!object || !namespace) {
      backoff.forget(key);
      return;
    }
    const uid = object.metadata?.uid ?? '';
    const ref: ObjectRef = {
      group: INFRA_GROUP,
      version: INFRA_VERSION,
      plural: kind.plural,
      namespace,
      name,
    };
    const generation = object.metadata?.generation;

    const ownerRef = object.metadata?.ownerReferences?.find(
      (r) => r.kind === kind.ownerKind && groupOf(r.apiVersion) === CAPI_GROUP,
    );
    if (!ownerRef) {
      log.info(`waiting for ${kind.ownerKind} controller to set OwnerRef`);
      return;
    }
    const owner = kind.getOwner(namespace, ownerRef.name);
    if (!owner) {
      // The owner's informer event reconciles this object again once the owner is in the cache.
      log.info(`waiting for owner ${kind.ownerKind} ${ownerRef.name} to appear`);
      return;
    }

    const paused =
      kind.clusterOf(namespace, owner)?.spec?.paused === true ||
      object.metadata?.annotations?.[PAUSED_ANNOTATION] !== undefined;
    /**
     * Writes status when it would change; `extra` (attempt, id) always goes along. Conditional on the
     * version the decision was made from (the cached object's, or `resourceVersion`): the cache may lag
     * behind our own last write, and a decision from an older version must never overwrite a newer one
     * (e.g. turn a recorded Rejected back into ConfirmingDelivery, which would send again). Only
     * `unconditional` writes (an accepted mail's id, which must land whatever changed) skip that.
     */
    const writeStatus = async (
      updates: ConditionInput[],
      extra: Record<string, unknown> = {},
      options: { resourceVersion?: string; base?: T; unconditional?: boolean } = {},
    ): Promise<T | undefined> => {
      const base = options.base ?? object;
      const resourceVersion = options.unconditional
        ? undefined
        : (options.resourceVersion ?? base.metadata?.resourceVersion);
      let conditions = base.status?.conditions;
      for (const update of updates) conditions = setCondition(conditions, update, now());
      const messageID = (extra.messageID as string | undefined) ?? base.status?.messageID;
      const provisioned = Boolean(messageID) && kind.fulfilled(base);
      const status: Record<string, unknown> = { ...extra, conditions };
      if (!paused) {
        status.observedGeneration = generation;
        status.initialization = { provisioned };
        status.ready = provisioned;
      }
      const current = base.status ?? {};
      const unchanged =
        Object.keys(extra).length === 0 &&
        sameConditions(current.conditions, conditions) &&
        (paused ||
          (current.observedGeneration === generation &&
            current.initialization?.provisioned === provisioned &&
            current.ready === provisioned));
      if (unchanged) return undefined;
      return deps.kube.mergePatch<T>(
        ref,
        { status },
        {
          subresource: 'status',
          ...(resourceVersion ? { resourceVersion } : {}),
        },
      );
    };

    const pausedCondition: ConditionInput = paused
      ? {
          type: ConditionType.Paused,
          status: 'True',
          reason: 'Paused',
          message: 'Cluster.spec.paused or the cluster.x-k8s.io/paused annotation is set',
          observedGeneration: generation,
        }
      : { type: ConditionType.Paused, status: 'False', reason: 'NotPaused', observedGeneration: generation };
    if (paused) {
      log.info('reconciliation is paused');
      await writeStatus([pausedCondition]);
      return;
    }

    const readyFor = (messageID: string | undefined, requestCondition: ConditionInput): ConditionInput => {
      if (messageID && kind.fulfilled(object))
        return {
          type: ConditionType.Ready,
          status: 'True',
          reason: 'Provisioned',
          observedGeneration: generation,
        };
      if (messageID) {
        return {
          type: ConditionType.Ready,
          status: 'False',
          reason: 'WaitingForFulfilment',
          message: `request mail ${messageID} accepted; waiting for the requested infrastructure to be filled into the spec`,
          observedGeneration: generation,
        };
      }
      return {
        type: ConditionType.Ready,
        status: 'False',
        reason: requestCondition.reason,
        ...(requestCondition.message ? { message: requestCondition.message } : {}),
        observedGeneration: generation,
      };
    };
    const withReady = (requestCondition: ConditionInput, messageID?: string): ConditionInput[] => [
      pausedCondition,
      requestCondition,
      readyFor(messageID, requestCondition),
    ];

    const decision = decide(
      { generation, annotations: object.metadata?.annotations, status: object.status },
      now(),
      deps.eventsSettleMs,
    );
    switch (decision.action) {
      case 'record':
        await record(decision.messageID, false);
        return;
      case 'rejected':
        await writeStatus(withReady(conditionOf(object, RequestReason.Rejected)));
        return;
      case 'lookup': {
        const created = new Date(object.metadata?.creationTimestamp ?? decision.attempt.startedAt);
        const since = new Date(created.getTime() - LOOKUP_SKEW_MS);
        const found = await deps.mail.findAccepted(uid, since, signal);
        if (found) {
          log.info('found the request mail of an unrecorded attempt through the events API', {
            attempt: decision.attempt.id,
            messageID: found,
          });
          await record(found, true);
          return;
        }
        if (!decision.settled) {
          log.info('send attempt without a recorded message id; waiting before concluding it was lost', {
            attempt: decision.attempt.id,
            recheckAfterMs: decision.recheckAfterMs,
          });
          await writeStatus(
            withReady({
              type: ConditionType.RequestSent,
              status: 'Unknown',
              reason: RequestReason.ConfirmingDelivery,
              message: `attempt ${decision.attempt.id} has no recorded message id; checking Mailgun's events before resending`,
              observedGeneration: generation,
            }),
          );
          return { requeueAfterMs: decision.recheckAfterMs };
        }
        log.warn('send attempt settled without any accepted mail in Mailgun events; sending again', {
          attempt: decision.attempt.id,
        });
        return claimAndSend(decision.attempt);
      }
      case 'claim':
        return claimAndSend(undefined);
    }

    async function record(messageID: string, fromLookup: boolean): Promise<void> {
      backoff.forget(key);
      const extra = object?.status?.messageID === messageID && !fromLookup ? {} : { messageID };
      const accepted: ConditionInput = {
        type: ConditionType.RequestSent,
        status: 'True',
        reason: RequestReason.Accepted,
        message: `Mailgun accepted the request mail ${messageID}`,
        observedGeneration: generation,
      };
      await writeStatus(withReady(accepted, messageID), extra);
      if (object?.metadata?.annotations?.[MESSAGE_ID_ANNOTATION] !== messageID) {
        await deps.kube.mergePatch(ref, {
          metadata: { annotations: { [MESSAGE_ID_ANNOTATION]: messageID } },
        });
      }
    }

    async function claimAndSend(replaces: SendAttempt | undefined): Promise<ReconcileResult> {
      if (!object) return;
      const waitMs = backoff.remainingMs(key, uid, now());
      if (waitMs > 0) {
        log.debug('backing off after a failed send', { waitMs });
        return { requeueAfterMs: waitMs };
      }
      const attempt: SendAttempt = { id: randomUUID(), startedAt: now().toISOString() };
      const sending: ConditionInput = {
        type: ConditionType.RequestSent,
        status: 'Unknown',
        reason: RequestReason.Sending,
        message: `sending the request mail (attempt ${attempt.id})`,
        observedGeneration: generation,
      };
      let claimed: T | undefined;
      try {
        // The resourceVersion precondition makes the claim exclusive: of all workers and replicas that
        // saw this version, exactly one succeeds; the others get 409 and look again.
        claimed = await writeStatus(
          withReady(sending),
          { sendAttempt: attempt },
          { resourceVersion: object.metadata?.resourceVersion ?? '' },
        );
      } catch (error) {
        if (isConflict(error)) {
          log.debug('another writer changed the object first; not sending', { attempt: attempt.id });
          return { requeue: true };
        }
        throw error;
      }
      log.info('claimed a send attempt', {
        attempt: attempt.id,
        ...(replaces ? { replaces: replaces.id } : {}),
      });
      const owner = kind.getOwner(object.metadata?.namespace ?? '', ownerRef?.name ?? '');
      if (!owner) return { requeue: true };
      const mail = kind.mail(object, owner, deps.recipient, {
        uid,
        attempt: attempt.id,
        object: `${kind.kind} ${namespace}/${name}`,
      });

      crashPoint('before-send');
      let messageID: string;
      try {
        messageID = await deps.mail.send(mail, signal);
      } catch (error) {
        return failed(error, claimed);
      }
      crashPoint('after-send');
      backoff.forget(key);
      log.info('Mailgun accepted the request mail', { attempt: attempt.id, messageID });
      // Not conditional: the mail is out, its id must be recorded whatever else changed meanwhile.
      const accepted: ConditionInput = {
        type: ConditionType.RequestSent,
        status: 'True',
        reason: RequestReason.Accepted,
        message: `Mailgun accepted the request mail ${messageID}`,
        observedGeneration: generation,
      };
      await writeStatus(
        withReady(accepted, messageID),
        { messageID },
        { ...(claimed ? { base: claimed } : {}), unconditional: true },
      );
      crashPoint('after-status-patch');
      await deps.kube.mergePatch(ref, { metadata: { annotations: { [MESSAGE_ID_ANNOTATION]: messageID } } });
      deps.kube.event(regardingOf(object), {
        type: 'Normal',
        reason: 'RequestSent',
        action: 'SendRequestMail',
        note: `Mailgun accepted the request mail ${messageID}`,
      });
      return;
    }

    async function failed(error: unknown, claimed: T | undefined): Promise<ReconcileResult> {
      if (!object) return;
      if (!(error instanceof MailgunError)) throw error;
      const condition = failureCondition(error, generation);
      // A mail that provably did not go out releases its attempt, so the next try need not wait for the
      // events to settle. Conditional on the claim's version: if anything changed since, the attempt
      // stays and the lookup path decides (slower, never wrong).
      const extra = error.maybeSent ? {} : { sendAttempt: null };
      const rv = claimed?.metadata?.resourceVersion;
      await writeStatus(withReady(condition), extra, {
        ...(claimed ? { base: claimed } : {}),
        ...(rv ? { resourceVersion: rv } : {}),
      }).catch((patchError: unknown) => {
        if (!isConflict(patchError)) throw patchError;
        log.info('the object changed since the claim; leaving the attempt to the events lookup', {
          attempt: claimed?.status?.sendAttempt?.id,
        });
      });
      switch (error.kind) {
        case 'rejected':
          backoff.forget(key);
          deps.kube.event(regardingOf(object), {
            type: 'Warning',
            reason: RequestReason.Rejected,
            action: 'SendRequestMail',
            note: error.message,
          });
          log.warn('Mailgun rejected the request mail; not retrying until the spec changes', {
            error: error.message,
            status: error.status,
          });
          return;
        case 'unauthorized':
          deps.kube.event(regardingOf(object), {
            type: 'Warning',
            reason: RequestReason.Unauthorized,
            action: 'SendRequestMail',
            note: 'Mailgun answered 401: check the API key (MAILGUN_API_KEY) and the domain',
          });
          log.error('Mailgun rejected the API key; retrying slowly', {
            status: error.status,
            retryAfterMs: deps.unauthorizedRetryMs,
          });
          backoff.failed(key, uid, now(), deps.unauthorizedRetryMs);
          return { requeueAfterMs: deps.unauthorizedRetryMs };
        case 'retryable':
          // The thrown error is logged and counted; the backoff holds the sends apart.
          backoff.failed(key, uid, now());
          throw error;
      }
    }
  };

  return async (request) => {
    try {
      return await reconcile(request);
    } catch (error) {
      // A conditional write lost to a newer version: the cache is behind. The newer version's watch
      // event reconciles again; the requeue covers an event that was already consumed.
      if (!isConflict(error)) throw error;
      request.log.debug('the object changed since the cached version; reconciling again');
      return { requeue: true };
    }
  };
}

function failureCondition(error: MailgunError, generation: number | undefined): ConditionInput {
  switch (error.kind) {
    case 'rejected':
      return {
        type: ConditionType.RequestSent,
        status: 'False',
        reason: RequestReason.Rejected,
        message: error.message,
        observedGeneration: generation,
      };
    case 'unauthorized':
      return {
        type: ConditionType.RequestSent,
        status: 'False',
        reason: RequestReason.Unauthorized,
        message: 'Mailgun answered 401 Unauthorized: check the API key and domain',
        observedGeneration: generation,
      };
    case 'retryable':
      return error.maybeSent
        ? {
            type: ConditionType.RequestSent,
            status: 'Unknown',
            reason: RequestReason.ConfirmingDelivery,
            message: `${error.message}; the mail may have been accepted, checking Mailgun's events before resending`,
            observedGeneration: generation,
          }
        : {
            type: ConditionType.RequestSent,
            status: 'False',
            reason: RequestReason.MailgunUnavailable,
            message: error.message,
            observedGeneration: generation,
          };
  }
}

function conditionOf(object: RequestObject, reason: string): ConditionInput {
  const current = findCondition(object.status?.conditions, ConditionType.RequestSent);
  return {
    type: ConditionType.RequestSent,
    status: 'False',
    reason,
    ...(current?.message ? { message: current.message } : {}),
    observedGeneration: object.metadata?.generation,
  };
}
