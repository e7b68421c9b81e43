export { KubeApiError, toKubeApiError, type KubeStatus, type KubeStatusDetails } from './kube-api-error.ts';
export {
  StatusReason,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isInternalError,
  isInvalid,
  isNotFound,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
  isUnauthorized,
} from './classify.ts';
export { TerminalError, isTerminal } from './terminal-error.ts';
