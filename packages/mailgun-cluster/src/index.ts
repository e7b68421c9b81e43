export { RuntimeWriter, requestApi, type RequestApi } from './api.ts';
export { program } from './config.ts';
export {
  createControllers,
  ownerPredicate,
  requestPredicate,
  retryRateLimiter,
  type ControllerSettings,
} from './controller.ts';
export { MAX_RECHECK_MS, decide, type Step } from './decide.ts';
export type {
  MailgunCluster,
  MailgunClusterSpec,
  MailgunClusterStatus,
  MailgunMachine,
  MailgunMachineSpec,
  MailgunMachineStatus,
} from './generated/types.ts';
export { mailgunClusterKind, mailgunMachineKind } from './kinds.ts';
export {
  REQUEST_TAG,
  clusterRequestMail,
  machineRequestMail,
  messageFields,
  type RequestMail,
  type SendMarkers,
} from './mail.ts';
export { MailgunError, MailgunService, classifyMailgunFailure, type FailureKind } from './mailgun.ts';
export { ConditionType, EventReason, PausedReason, ReadyReason, RequestSentReason } from './reasons.ts';
export { createRequestReconciler, type RequestKind, type RequestReconcilerOptions } from './reconcile.ts';
export {
  CAPI_GROUP,
  CAPI_VERSION,
  INFRA_GROUP,
  INFRA_VERSION,
  MESSAGE_ID_ANNOTATION,
  PAUSED_ANNOTATION,
  type CapiObject,
  type RequestObject,
  type SendAttempt,
} from './resource.ts';
