export { ConfigError } from './config-error.ts';
export { parseDuration } from './duration.ts';
export { FileSecret, type SecretReload } from './file-secret.ts';
export { formatHelp, type HelpInfo } from './help.ts';
export {
  bindAddress,
  boolean,
  dnsLabel,
  dnsSubdomain,
  duration,
  httpUrl,
  integer,
  listOf,
  oneOf,
  text,
  type BindAddress,
  type ValueKind,
} from './kinds.ts';
export { labelSelector } from './label-selector.ts';
export {
  nameAsSet,
  option,
  secret,
  variableOf,
  type Option,
  type OptionSet,
  type OptionValues,
  type Secret,
  type SecretOption,
} from './option.ts';
export { optionsTable } from './options-table.ts';
export {
  defineProgram,
  parseProgram,
  type Configuration,
  type ControllerProgram,
  type ParsedProgram,
  type ProgramShape,
} from './program.ts';
export type { Env, SetBy } from './resolve.ts';
export type { StandardValues } from './standard-options.ts';
