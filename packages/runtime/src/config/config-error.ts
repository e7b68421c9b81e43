/**
 * A value the user has to fix: missing, malformed, or well-formed but naming what does not exist (a
 * kubeconfig file or context, a controller's cloud resource). `option` is the flag or variable that set
 * it (both when neither was set: see `nameAsSet`); `runController` prints the message as one line and
 * exits 2, whether the value was refused while parsing, loading the kubeconfig, or in a controller's
 * start-up. What fails for another reason (an API that does not answer) is not one.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly option: string;
  constructor(option: string, problem: string) {
    super(`${option}: ${problem}`);
    this.option = option;
  }
}
