export {
  parseCommandLine,
  runCommandLine,
  type CommandLine,
  type CommandLineOutput,
} from './command-line.ts';
export { formatHelp } from './help.ts';
export { KUBE_CONFIG_VARIABLES } from './kube-variables.ts';
export { readPackageInfo, type PackageInfo } from './package-info.ts';
export type { EnvVariable, Program, ValueFlag } from './program.ts';
