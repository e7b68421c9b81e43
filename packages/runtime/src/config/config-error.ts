/** A missing or malformed value. `option` is the flag or variable to fix (both when neither was set). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly option: string;
  constructor(option: string, problem: string) {
    super(`${option}: ${problem}`);
    this.option = option;
  }
}
