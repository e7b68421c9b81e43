/**
 * What a controller program tells `--help` and `--version` about itself. The variables come from the
 * controller's config module, the one place that reads them, so the help cannot drift from the parser.
 */

/** An environment variable a program reads, as `--help` lists it. */
export interface EnvVariable {
  readonly name: string;
  /** One line: what it sets and which values it takes. */
  readonly description: string;
  /** A value that behaves exactly like leaving the variable unset, when there is one. */
  readonly default?: string;
}

/** A flag taking a value (`--name value` or `--name=value`) that overrides one variable. */
export interface ValueFlag {
  readonly name: `--${string}`;
  /** The variable it overrides; `--help` describes the flag by that variable's entry. */
  readonly variable: string;
}

export interface Program {
  /**
   * The program's package.json (`name`, `version`, `description`), located from the module so it works
   * from `src/` and `dist/` alike: `new URL('../package.json', import.meta.url)` in `main`.
   */
  readonly packageJson: URL;
  readonly variables: readonly EnvVariable[];
  readonly flags?: readonly ValueFlag[];
}
