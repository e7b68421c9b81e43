export { program } from './config.ts';
export { ConditionType, setCondition, type Condition } from './conditions.ts';
export { createControllers, type ControllerSettings } from './controllers.ts';
export {
  MESSAGE_ID_ANNOTATION,
  RequestReason,
  decide,
  type Decision,
  type RequestState,
  type SendAttempt,
} from './decide.ts';
export type {
  MailgunCluster,
  MailgunClusterSpec,
  MailgunClusterStatus,
  MailgunMachine,
  MailgunMachineSpec,
  MailgunMachineStatus,
} from './generated/types.ts';
export {
  REQUEST_TAG,
  clusterRequestMail,
  machineRequestMail,
  messageFields,
  type RequestMail,
  type SendMarkers,
} from './mail.ts';
export {
  MailgunError,
  MailgunService,
  classifyMailgunFailure,
  type FailureKind,
  type MailService,
} from './mailgun.ts';
