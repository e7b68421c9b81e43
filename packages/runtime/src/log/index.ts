export {
  LOG_FORMATS,
  LOG_LEVELS,
  createLogger,
  createSilentLogger,
  type LogFormat,
  type LogLevel,
  type LoggerOptions,
} from './logger.ts';
export {
  MIN_SECRET_LENGTH,
  REDACTED,
  SecretRegistry,
  globalSecrets,
  isCredentialKey,
  redactText,
  registerSecret,
} from './redact.ts';
