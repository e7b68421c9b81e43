/**
 * `--kubeconfig` and `--context` to `loadKubeConfig` and back: what it is given, and a kubeconfig it
 * refuses as the bad value of the option that set it (exit 2, like any other bad value), named as the
 * user set it. `KUBECONFIG` is both client-go's variable and `--kubeconfig`'s twin: the flag is one
 * file, the variable a list, and whichever was set is the name in the message.
 */
import { ConfigError } from '../config/config-error.ts';
import { nameAsSet } from '../config/option.ts';
import type { Env, SetBy } from '../config/resolve.ts';
import { standardOptions, type StandardOptions, type StandardValues } from '../config/standard-options.ts';
import type { KubeConfigError, LoadKubeConfigOptions } from '@loopwright/client';

type KubeOptions = Pick<StandardOptions, 'kubeconfig' | 'context'>;

// Their flags and variables do not depend on the program.
const kubeOptions: KubeOptions = standardOptions({ name: 'any', workers: 1, reconcileTimeout: '0' });

/**
 * The flag's file as the explicit path; else `KUBECONFIG` as the option resolved it (trimmed, and an
 * empty one unset, as every variable), which `loadKubeConfig` reads from the environment.
 */
export function loadKubeConfigOptions(
  standard: Pick<StandardValues, 'kubeconfig' | 'context'>,
  setBy: Pick<SetBy<KubeOptions>, 'kubeconfig'>,
  env: Env,
): LoadKubeConfigOptions {
  const byFlag = setBy.kubeconfig === kubeOptions.kubeconfig.flag;
  return {
    ...(byFlag && standard.kubeconfig ? { kubeconfig: standard.kubeconfig } : {}),
    ...(standard.context ? { context: standard.context } : {}),
    env: { ...env, [kubeOptions.kubeconfig.variable]: byFlag ? undefined : standard.kubeconfig },
  };
}

/** The option whose value `loadKubeConfig` refused, named as the user set it (both names when unset). */
export function kubeConfigValueError(error: KubeConfigError, setBy: SetBy<KubeOptions>): ConfigError {
  return new ConfigError(nameAsSet(kubeOptions[error.input], setBy[error.input]), error.message);
}
