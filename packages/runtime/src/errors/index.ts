// The one API error type and its predicates live in @loopwright/client; controllers get them here.
export {
  KubeApiError,
  KubeApiFailure,
  toKubeApiError,
  type KubeStatus,
  type KubeStatusDetails,
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
} from '@loopwright/client';
export { TerminalError, isTerminal } from './terminal-error.ts';
