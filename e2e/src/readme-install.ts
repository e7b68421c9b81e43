/**
 * The root README's "Install in a cluster" commands, read from the README itself, so that what the e2e
 * suites install is literally what a user is told to type and cannot drift from it. The suites run
 * `helm(readmeInstall(controller) + testOnlyArgs(...))` from the repository root: the README's release,
 * chart, namespace and values unchanged, plus only what the test environment needs and a user would not.
 */
import { readFileSync } from 'node:fs';
import type { ChartName } from './charts.ts';

/** The README's section with the install commands, and the fenced block in it that holds them. */
const SECTION = '## Install in a cluster';

/** One `helm install` of the README, as the arguments after `helm`, and what they name. */
export interface ReadmeInstall {
  /** e.g. `['install', 'at-scheduler', 'charts/at-scheduler', '-n', 'loopwright', '--create-namespace']` */
  args: string[];
  release: string;
  /** The chart path as written (relative to the repository root, where the suites run helm). */
  chart: string;
  namespace: string;
  /** The values the command sets (`--set a=b,c=d`), by key. */
  values: Record<string, string>;
}

/** The README's `helm install` command for `controller` (the one installing `charts/<controller>`). */
export function readmeInstall(controller: ChartName, readme = readRootReadme()): ReadmeInstall {
  const installs = readmeInstalls(readme).filter((install) => install.chart === `charts/${controller}`);
  if (installs.length !== 1)
    throw new Error(`the README's "${SECTION}" has ${installs.length} helm installs of charts/${controller}`);
  return installs[0] as ReadmeInstall;
}

/** Every `helm install` command of the README's install section, in order. */
export function readmeInstalls(readme = readRootReadme()): ReadmeInstall[] {
  return shellCommands(installBlock(readme))
    .filter((words) => words[0] === 'helm' && words[1] === 'install')
    .map((words) => describeInstall(words.slice(1)));
}

/**
 * What a test environment adds to a README command and a user would not: `--wait` (with a timeout) and
 * values saying where things are in this cluster (`--set-json`, so a URL stays one string). A value the
 * README sets may not be set again: a later `--set` would silently replace the user's.
 */
export function testOnlyArgs(
  install: ReadmeInstall,
  options: { timeout: string; values?: Record<string, unknown> },
): string[] {
  const args = ['--wait', '--timeout', options.timeout];
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

/** The first ```sh block after the install heading, before the next section. */
function installBlock(readme: string): string {
  const lines = readme.split('\n');
  const start = lines.findIndex((line) => line.trim() === SECTION);
  if (start < 0) throw new Error(`the README has no "${SECTION}" section`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const open = section.findIndex((line) => line.trim() === '```sh');
  const close = section.findIndex((line, i) => i > open && line.trim() === '```');
  if (open < 0 || close < 0) throw new Error(`the README's "${SECTION}" has no \`\`\`sh block`);
  return section.slice(open + 1, close).join('\n');
}

/**
 * The block's commands as words, the way a POSIX shell reads these lines: a backslash at the end of a
 * line continues it, `#` at the start of a word comments out the rest of the line, quotes and
 * backslashes escape. Anything that makes a line more than one plain command (a variable, a command
 * substitution, a pipe, a list, a redirection) is refused: the suites would not run what a shell runs.
 */
export function shellCommands(block: string): string[][] {
  const commands: string[][] = [];
  for (const line of block.replace(/\\\n/g, '').split('\n')) {
    const words = shellWords(line);
    if (words.length > 0) commands.push(words);
  }
  return commands;
}

function shellWords(line: string): string[] {
  const words: string[] = [];
  /** The word being read; `undefined` between words (an empty quoted word `''` is still a word). */
  let word: string | undefined;
  const append = (text: string) => (word = (word ?? '') + text);
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
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) {
      break;
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
  if (word !== undefined) words.push(word);
  return words;
}

/** `install <release> <chart> [flags]`: the README writes the release and chart first, as helm's help does. */
function describeInstall(args: string[]): ReadmeInstall {
  const [, release, chart] = args;
  if (!release || !chart || release.startsWith('-') || chart.startsWith('-'))
    throw new Error(`helm ${args.join(' ')}: release and chart must come first`);
  let namespace: string | undefined;
  const values: Record<string, string> = {};
  for (let i = 3; i < args.length; i++) {
    const flag = args[i] ?? '';
    const [name, inline] = flag.includes('=')
      ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)]
      : [flag];
    const value = () => inline ?? args[++i] ?? '';
    if (name === '-n' || name === '--namespace') namespace = value();
    else if (name === '--set')
      for (const pair of value().split(',')) {
        const eq = pair.indexOf('=');
        if (eq < 1) throw new Error(`helm ${args.join(' ')}: --set ${pair} is not key=value`);
        values[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    else if (name !== '--create-namespace')
      throw new Error(`helm ${args.join(' ')}: ${flag} is new here; teach readme-install.ts what it means`);
  }
  if (!namespace) throw new Error(`helm ${args.join(' ')}: no namespace`);
  return { args, release, chart, namespace, values };
}
