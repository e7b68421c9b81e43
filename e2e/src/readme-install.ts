/**
 * The root README's "Install in a cluster" commands, read from the README itself, so that what the e2e
 * suites install is literally what a user is told to type and cannot drift from it. The suites run
 * `helm(readmeInstall(controller) + testOnlyArgs(...))` from the repository root: the README's release,
 * chart, namespace and values unchanged, plus only what the test environment needs and a user would not;
 * and they create the Secrets the README has the user create (`readmeSecrets(controller)`) in the
 * README's namespace, under its name, with its keys.
 */
import { readFileSync } from 'node:fs';
import type { ChartName } from './charts.ts';

/** The README's section with the install commands, in its ```sh blocks. */
const SECTION = '## Install in a cluster';

/** One `helm install` of the README, as the arguments after `helm`, and what they name. */
export interface ReadmeInstall {
  /**
   * e.g. `['install', 'at-scheduler', 'oci://ghcr.io/loopwright/charts/at-scheduler', '--version', '0.1.0',
   * '-n', 'loopwright', '--create-namespace']`
   */
  args: string[];
  release: string;
  /** The chart as written: a released chart, `oci://<registry>/<owner>/charts/<chart>`. */
  chart: string;
  /** The chart's `--version`: the release the README installs. */
  version: string;
  namespace: string;
  /** The values the command sets (`--set a=b,c=d`; `--set-json a=<json>` as its JSON text), by key. */
  values: Record<string, string>;
}

/**
 * One `kubectl create secret generic` of the README: the Secret a chart only references (an
 * `existingSecret` value of the install in the same namespace), which the user creates first.
 */
export interface ReadmeSecret {
  namespace: string;
  name: string;
  /** Each `--from-literal` key, with the shell variable its value is written as (`key="$VARIABLE"`). */
  variables: Record<string, string>;
}

/**
 * A word as a shell reads it: plain text, or text followed by a variable's value. The README writes a
 * secret value only as `"$NAME"`, the whole of a word or of its value after `=`
 * (`--from-literal=api-key="$MAILGUN_API_KEY"`): the suites supply the value, a user their own.
 */
export type ShellWord = string | { prefix: string; variable: string };

/** The README's `helm install` command for `controller` (the one installing `oci://.../charts/<controller>`). */
export function readmeInstall(controller: ChartName, readme = readRootReadme()): ReadmeInstall {
  const installs = readmeInstalls(readme).filter((install) => chartName(install.chart) === controller);
  if (installs.length !== 1)
    throw new Error(
      `the README's "${SECTION}" has ${installs.length} helm installs of the chart ${controller}`,
    );
  return installs[0] as ReadmeInstall;
}

/** `oci://<registry>/<owner>/charts/<chart>`: the chart's name, the last part. */
export function chartName(chart: string): string {
  const match = /^oci:\/\/[^/]+\/(?:[^/]+\/)*charts\/([^/]+)$/.exec(chart);
  if (!match?.[1])
    throw new Error(`${chart} is not a released chart, oci://<registry>/<owner>/charts/<chart>`);
  return match[1];
}

/** `oci://<registry>/<owner>/charts/<chart>` with its registry swapped for `registry`. */
export function chartFromRegistry(chart: string, registry: string): string {
  return chart.replace(/^oci:\/\/[^/]+\//, `oci://${registry}/`);
}

/**
 * The install with its chart taken from `registry` (`127.0.0.1:<port>`) instead of the README's: the one
 * change between the README's command and the suites' (that registry holds this checkout's release of
 * the README's version, published by the global setup with `pnpm release --local`).
 */
export function fromRegistry(install: ReadmeInstall, registry: string): ReadmeInstall {
  const chart = chartFromRegistry(install.chart, registry);
  return { ...install, chart, args: install.args.map((arg) => (arg === install.chart ? chart : arg)) };
}

/** Every `helm install` command of the README's install section, in order. */
export function readmeInstalls(readme = readRootReadme()): ReadmeInstall[] {
  return sectionCommands(readme).installs;
}

/** The Secrets the README has the user create for `controller`'s install, in order (none for some). */
export function readmeSecrets(controller: ChartName, readme = readRootReadme()): ReadmeSecret[] {
  const install = readmeInstall(controller, readme);
  return sectionCommands(readme).secrets.filter((secret) => references(install, secret));
}

/** The one Secret the README has the user create for `controller`'s install. */
export function readmeSecret(controller: ChartName, readme = readRootReadme()): ReadmeSecret {
  const secrets = readmeSecrets(controller, readme);
  if (secrets.length !== 1)
    throw new Error(`the README's "${SECTION}" creates ${secrets.length} Secrets for charts/${controller}`);
  return secrets[0] as ReadmeSecret;
}

/** The install takes the Secret by one of its `existingSecret` values, in its own namespace. */
function references(install: ReadmeInstall, secret: ReadmeSecret): boolean {
  return (
    install.namespace === secret.namespace &&
    Object.entries(install.values).some(
      ([key, value]) => key.endsWith('.existingSecret') && value === secret.name,
    )
  );
}

/**
 * The Secret's data: each of its README keys with the value given for the key's variable. Every
 * variable the README names must be given, and nothing else: the Secret is exactly the README's.
 */
export function secretData(secret: ReadmeSecret, values: Record<string, string>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, variable] of Object.entries(secret.variables)) {
    const value = values[variable];
    if (value === undefined)
      throw new Error(`no value for ${variable} (key ${key} of the Secret ${secret.name})`);
    data[key] = value;
  }
  const unused = Object.keys(values).filter(
    (variable) => !Object.values(secret.variables).includes(variable),
  );
  if (unused.length > 0)
    throw new Error(`the README's Secret ${secret.name} has no key written as ${unused.join(', ')}`);
  return data;
}

/**
 * What a test environment adds to a README command and a user would not: `--plain-http` (the node's
 * registry has no TLS), `--wait` (with a timeout) and values saying where things are in this cluster
 * (`--set-json`, so a URL stays one string). A value the README sets may not be set again: a later
 * `--set` would silently replace the user's.
 */
export function testOnlyArgs(
  install: ReadmeInstall,
  options: { timeout: string; values?: Record<string, unknown> },
): string[] {
  const args = ['--plain-http', '--wait', '--timeout', options.timeout];
  for (const [key, value] of Object.entries(options.values ?? {})) {
    const overlaps = (readme: string) =>
      `${readme}.`.startsWith(`${key}.`) || `${key}.`.startsWith(`${readme}.`);
    const readmeKey = Object.keys(install.values).find(overlaps);
    if (readmeKey) throw new Error(`${key} would replace the README's ${readmeKey}: not the test's to set`);
    args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

function readRootReadme(): string {
  return readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
}

function sectionCommands(readme: string): InstallCommands {
  return installCommands(sectionBlocks(readme));
}

/** What a block of install commands installs, and the Secrets it has the user create for that. */
export interface InstallCommands {
  installs: ReadmeInstall[];
  secrets: ReadmeSecret[];
}

/**
 * A block's `helm install`s and `kubectl create secret`s (the root README's install section, or a chart
 * README's commands). The other commands a user types there (`kubectl create namespace`...) must be
 * plain commands too; only a Secret's values may be variables. Every Secret must be one that an install
 * references.
 */
export function installCommands(block: string): InstallCommands {
  const installs: ReadmeInstall[] = [];
  const secrets: ReadmeSecret[] = [];
  for (const words of shellCommands(block)) {
    const texts = words.filter((word) => typeof word === 'string');
    const kubectl = withoutNamespace(texts.slice(1)).rest;
    if (texts[0] === 'kubectl' && kubectl[0] === 'create' && kubectl[1] === 'secret')
      secrets.push(describeSecret(words));
    else if (words[0] === 'helm' && words[1] === 'install')
      installs.push(describeInstall(plainWords(words).slice(1)));
    else plainWords(words);
  }
  for (const secret of secrets)
    if (!installs.some((install) => references(install, secret)))
      throw new Error(
        `the Secret ${secret.namespace}/${secret.name} is no existingSecret of an install there`,
      );
  return { installs, secrets };
}

/** Every ```sh block of the install section (the heading to the next `## `), one after the other. */
function sectionBlocks(readme: string): string {
  const lines = readme.split('\n');
  const start = lines.findIndex((line) => line.trim() === SECTION);
  if (start < 0) throw new Error(`the README has no "${SECTION}" section`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const blocks: string[] = [];
  let open: number | undefined;
  section.forEach((line, i) => {
    if (open === undefined && line.trim() === '```sh') open = i;
    else if (open !== undefined && line.trim() === '```') {
      blocks.push(section.slice(open + 1, i).join('\n'));
      open = undefined;
    }
  });
  if (open !== undefined) throw new Error(`the README's "${SECTION}" has an unclosed \`\`\`sh block`);
  if (blocks.length === 0) throw new Error(`the README's "${SECTION}" has no \`\`\`sh block`);
  return blocks.join('\n');
}

/** The words, none of them a variable: what the suites run as it is written. */
function plainWords(words: ShellWord[]): string[] {
  return words.map((word) => {
    if (typeof word === 'string') return word;
    throw new Error(`not a plain command: ${words.map(showWord).join(' ')}`);
  });
}

function showWord(word: ShellWord): string {
  return typeof word === 'string' ? word : `${word.prefix}"$${word.variable}"`;
}

/** kubectl's `-n <namespace>` / `--namespace=<namespace>`, wherever it is, and the other words. */
function withoutNamespace(words: string[]): { namespace?: string; rest: string[] } {
  let namespace: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    if (word === '-n' || word === '--namespace') namespace = words[++i];
    else if (word.startsWith('--namespace=')) namespace = word.slice('--namespace='.length);
    else rest.push(word);
  }
  return { namespace, rest };
}

/** `kubectl -n <namespace> create secret generic <name> --from-literal=<key>="$VARIABLE"...` */
function describeSecret(words: ShellWord[]): ReadmeSecret {
  const command = words.map(showWord).join(' ');
  const literals = words.filter((word) => typeof word !== 'string');
  const { namespace, rest } = withoutNamespace(words.filter((word) => typeof word === 'string').slice(1));
  const [, , type, name, ...flags] = rest;
  if (type !== 'generic' || !name || name.startsWith('-'))
    throw new Error(`${command}: not \`create secret generic <name>\``);
  if (!namespace) throw new Error(`${command}: no namespace`);
  if (flags.length > 0)
    throw new Error(`${command}: ${flags.join(' ')} is new here; teach readme-install.ts`);
  const variables: Record<string, string> = {};
  for (const { prefix, variable } of literals) {
    const key = /^--from-literal=([-._a-zA-Z0-9]+)=$/.exec(prefix)?.[1];
    if (!key) throw new Error(`${command}: ${prefix}"$${variable}" is not --from-literal=<key>="$VARIABLE"`);
    if (key in variables) throw new Error(`${command}: key ${key} twice`);
    variables[key] = variable;
  }
  if (Object.keys(variables).length === 0) throw new Error(`${command}: no --from-literal=<key>="$VARIABLE"`);
  return { namespace, name, variables };
}

/**
 * The block's commands as words, the way a POSIX shell reads these lines: a backslash at the end of a
 * line continues it, `#` at the start of a word comments out the rest of the line, quotes and
 * backslashes escape. One variable form is read, `"$NAME"` as the whole of a word or of its value after
 * `=`, and kept as the variable (a Secret's value, which only the user has). Anything else that makes a
 * line more than one plain command (another variable form, a command substitution, a pipe, a list, a
 * redirection) is refused: the suites would not run what a shell runs.
 */
export function shellCommands(block: string): ShellWord[][] {
  const commands: ShellWord[][] = [];
  for (const line of block.replace(/\\\n/g, '').split('\n')) {
    const words = shellWords(line);
    if (words.length > 0) commands.push(words);
  }
  return commands;
}

function shellWords(line: string): ShellWord[] {
  const words: ShellWord[] = [];
  /** The word being read; `undefined` between words (an empty quoted word `''` is still a word). */
  let word: string | undefined;
  /** The variable that ends the word being read (the pattern below sees that the word ends there). */
  let variable: string | undefined;
  const append = (text: string) => (word = (word ?? '') + text);
  const endWord = () => {
    if (variable !== undefined) words.push({ prefix: word ?? '', variable });
    else if (word !== undefined) words.push(word);
    word = variable = undefined;
  };
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else append(c);
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && '"\\'.includes(line.charAt(i + 1))) append(line.charAt(++i));
      else if ('$`'.includes(c)) throw new Error(`not a plain command: ${line}`);
      else append(c);
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else if (c === '#' && word === undefined) {
      break;
    } else if (c === '"' && (word === undefined || word.endsWith('='))) {
      const whole = /^"\$([A-Za-z_][A-Za-z0-9_]*)"(?=[ \t]|$)/.exec(line.slice(i));
      if (whole?.[1]) {
        word ??= '';
        variable = whole[1];
        i += whole[0].length - 1;
      } else {
        quote = c;
        append('');
      }
    } else if (c === '"' || c === "'") {
      quote = c;
      append('');
    } else if (c === '\\') {
      append(line.charAt(++i));
    } else if ('$`|&;<>(){}'.includes(c)) {
      throw new Error(`not a plain command: ${line}`);
    } else {
      append(c);
    }
  }
  if (quote) throw new Error(`unterminated quote: ${line}`);
  endWord();
  return words;
}

/** `install <release> <chart> [flags]`: the README writes the release and chart first, as helm's help does. */
function describeInstall(args: string[]): ReadmeInstall {
  const [, release, chart] = args;
  if (!release || !chart || release.startsWith('-') || chart.startsWith('-'))
    throw new Error(`helm ${args.join(' ')}: release and chart must come first`);
  let namespace: string | undefined;
  let version: string | undefined;
  const values: Record<string, string> = {};
  for (let i = 3; i < args.length; i++) {
    const flag = args[i] ?? '';
    const [name, inline] = flag.includes('=')
      ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)]
      : [flag];
    const value = () => inline ?? args[++i] ?? '';
    if (name === '-n' || name === '--namespace') namespace = value();
    else if (name === '--version') version = value();
    else if (name === '--set')
      for (const pair of value().split(',')) {
        const eq = pair.indexOf('=');
        if (eq < 1) throw new Error(`helm ${args.join(' ')}: --set ${pair} is not key=value`);
        values[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    else if (name === '--set-json') {
      const pair = value();
      const eq = pair.indexOf('=');
      if (eq < 1) throw new Error(`helm ${args.join(' ')}: --set-json ${pair} is not key=<json>`);
      values[pair.slice(0, eq)] = pair.slice(eq + 1);
    } else if (name !== '--create-namespace')
      throw new Error(`helm ${args.join(' ')}: ${flag} is new here; teach readme-install.ts what it means`);
  }
  if (!namespace) throw new Error(`helm ${args.join(' ')}: no namespace`);
  chartName(chart);
  if (!version)
    throw new Error(`helm ${args.join(' ')}: no --version (a release is installed by its version)`);
  return { args, release, chart, version, namespace, values };
}
