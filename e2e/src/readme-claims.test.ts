/**
 * What the READMEs and docs/ claim about this repository, checked against it (no cluster: milliseconds):
 * the root README's first screen and its two commands (what CI runs), paragraphs a newcomer reads in
 * one go, the commands they name (scripts, controllers, files), one set of namespaces and Secret names
 * across the root README, the chart READMEs and NOTES.txt, and links and paths that resolve inside the
 * repository.
 */
import assert from 'node:assert/strict';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chartName, installCommands, readmeInstall, readmeSecrets } from './readme-install.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const listDir = (dir: string) => (existsSync(join(root, dir)) ? readdirSync(join(root, dir)) : []);

const QUICK_START = ['./scripts/setup.sh && pnpm demo', './scripts/setup.sh && pnpm test'];
const FIRST_SCREEN_LINES = 40;
const PARAGRAPH_WORDS = 80;

// The charts users install; a library chart (loopwright-controller) is installed only inside them.
const charts = listDir('charts').filter(
  (name) =>
    existsSync(join(root, 'charts', name, 'Chart.yaml')) &&
    !/^type:\s*library\s*$/m.test(readFileSync(join(root, 'charts', name, 'Chart.yaml'), 'utf8')),
);
const docs = listDir('docs')
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
/** Where a newcomer reads commands: the root README and docs/. */
const commandFiles = ['README.md', ...docs];
/** Every Markdown file whose links and paths must resolve inside the repository. */
const linkedFiles = [
  'README.md',
  ...docs,
  'CONTRIBUTING.md',
  'e2e/README.md',
  ...listDir('packages').map((name) => `packages/${name}/README.md`),
  ...charts.map((name) => `charts/${name}/README.md`),
].filter((path) => existsSync(join(root, path)));

// ---- Markdown, as far as these checks read it ----

interface Fence {
  lang: string;
  lines: string[];
}

/** The fenced code blocks, and the rest of the file with each fenced line blanked (line numbers kept). */
function splitFences(markdown: string): { fences: Fence[]; prose: string[] } {
  const fences: Fence[] = [];
  const prose: string[] = [];
  let open: Fence | undefined;
  for (const line of markdown.split('\n')) {
    const fence = /^\s*```(\S*)/.exec(line);
    if (open) {
      if (fence && fence[1] === '') open = undefined;
      else open.lines.push(line);
      prose.push('');
    } else if (fence) {
      open = { lang: fence[1] ?? '', lines: [] };
      fences.push(open);
      prose.push('');
    } else prose.push(line);
  }
  return { fences, prose };
}

/**
 * The paragraphs outside code blocks and tables: consecutive non-blank lines, each list item on its own,
 * headings and HTML comments apart.
 */
function paragraphs(markdown: string): string[] {
  const result: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length > 0) result.push(current.join(' '));
    current = [];
  };
  for (const line of splitFences(markdown).prose) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('|') || trimmed.startsWith('#') || trimmed.startsWith('<!--')) {
      flush();
      continue;
    }
    if (/^([-*+]|\d+\.)\s/.test(trimmed)) flush();
    current.push(trimmed);
  }
  flush();
  return result;
}

/** The text of every code span outside code blocks (a span may cross a line break within a paragraph). */
function codeSpans(markdown: string): string[] {
  const spans: string[] = [];
  for (const block of splitFences(markdown)
    .prose.join('\n')
    .split(/\n\s*\n/))
    for (const match of block.matchAll(/(`+)([^`]+?)\1/g))
      spans.push((match[2] ?? '').replace(/\s*\n\s*/g, ' ').trim());
  return spans;
}

/** Where a newcomer reads commands: code spans and the lines of code blocks, comments dropped. */
function codeTexts(markdown: string): string[] {
  const blockLines = splitFences(markdown).fences.flatMap((fence) =>
    fence.lines.map((line) => line.replace(/(^|\s)#.*$/, '')),
  );
  return [...codeSpans(markdown), ...blockLines];
}

/** The targets of inline links and images (`[text](target)`), outside code. */
function linkTargets(markdown: string): string[] {
  const text = splitFences(markdown)
    .prose.join('\n')
    .replace(/(`+)[^`]+?\1/g, '');
  return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  return new Set(
    splitFences(markdown)
      .prose.filter((line) => /^#{1,6}\s/.test(line))
      .map((line) => anchorOf(line.replace(/^#+\s*/, ''))),
  );
}

// ---- What the checks compare with ----

const rootScripts = Object.keys(
  (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts,
);
/** pnpm's own commands that the docs use or may use. */
const PNPM_BUILT_INS = ['install', 'add', 'remove', 'update', 'exec', 'run', 'dlx', 'why', 'list'];
/** Linked into node_modules/.bin by set-up (scripts/link-bin.sh): the pinned helm and kubectl. */
const PNPM_TOOLS = ['helm', 'kubectl'];

/** `pnpm [flags] <name> <args...>` wherever it appears in a text, as the name and the words after it. */
function pnpmCommands(text: string): { name: string; args: string[] }[] {
  const commands: { name: string; args: string[] }[] = [];
  for (const match of text.matchAll(/(?<![\w@./-])pnpm((?:[ \t]+[^\s;&|)"'`]+)+)/g)) {
    const words = (match[1] ?? '').trim().split(/\s+/);
    while (words[0]?.startsWith('-')) words.shift();
    const [name, ...args] = words;
    if (name) commands.push({ name, args });
  }
  return commands;
}

/** A controller, by its package: a workspace package with a `serve` script (`pnpm nx serve <name>`). */
function hasServeScript(name: string): boolean {
  const manifest = join(root, 'packages', name, 'package.json');
  if (!existsSync(manifest)) return false;
  return Boolean(
    (JSON.parse(readFileSync(manifest, 'utf8')) as { scripts?: Record<string, string> }).scripts?.serve,
  );
}

/** A placeholder, a glob or an elision: `<controller>`, `charts/*`, `...`: no one path to check. */
const isPattern = (text: string) => /[<>*…${}]|\.\.\.|\[/.test(text);

/**
 * The names the docs' generator examples give (`pnpm nx g @loopwright/nx-plugin:controller <name>`): the
 * paths they show are what the generator writes, not files of this repository.
 */
const generatedNames = new Set(
  linkedFiles.flatMap((path) =>
    [...read(path).matchAll(/nx-plugin:controller\s+([a-z][a-z0-9-]*)/g)].map((match) => match[1] ?? ''),
  ),
);
const namesGenerated = (path: string) => [...generatedNames].some((name) => path.includes(name));

/**
 * A code span that reads as a file path: one word with a `/`, ending in an extension or a `/`. Not a
 * URL, a flag with its value (`--x=a/b.ts`), a media type (`application/json`) or a version
 * (`agent/0.1.0`).
 */
function looksLikePath(span: string): boolean {
  if (/[\s=]/.test(span) || !/\w/.test(span) || !span.includes('/') || span.includes('://')) return false;
  if (/^[~$]/.test(span) || /^(application|text|image|multipart)\//.test(span)) return false;
  return span.endsWith('/') || /\.[A-Za-z][A-Za-z0-9]*$/.test(span);
}

/** Build outputs, written by the build and not kept in the repository. */
const BUILD_OUTPUT = /^(dist|node_modules|reports)\//;

/** Directories of every workspace package and chart: where a bare `src/` or `crds/` may be. */
const projectDirs = [
  ...listDir('packages').map((name) => join(root, 'packages', name)),
  ...charts.map((name) => join(root, 'charts', name)),
];

/**
 * Why `target` (a link or a path in `file`) does not resolve inside the repository, or undefined when it
 * does: relative to the file; a path in backticks also relative to the file's `src/` (a package README
 * names its sources so) or to the repository root, and a bare directory (`crds/`) in any package or chart.
 */
function unresolved(file: string, target: string, kind: 'link' | 'path'): string | undefined {
  if (target.includes('/work/') || target.includes('shared/reference'))
    return 'a path outside the repository';
  if (isAbsolute(target)) return 'an absolute filesystem path';
  const [path = '', anchor] = target.split('#');
  const here = dirname(join(root, file));
  const bases =
    kind === 'link'
      ? [here]
      : [here, join(here, 'src'), root, ...(/^[\w.-]+\/$/.test(path) ? projectDirs : [])];
  for (const base of bases) {
    const full = path === '' ? join(root, file) : resolve(base, path);
    const inside = relative(root, full);
    if (inside.startsWith('..') || isAbsolute(inside) || !existsSync(full)) continue;
    if (anchor && full.endsWith('.md') && !anchors(readFileSync(full, 'utf8')).has(anchor))
      return `no heading #${anchor} in ${inside}`;
    return undefined;
  }
  return path.startsWith('..') ? 'outside the repository or missing' : 'no such file or directory';
}

// ---- The checks ----

describe('the root README', () => {
  const readme = read('README.md');
  const lines = readme.split('\n');
  const quickStart = lines.findIndex((line) => line.trim() === '## Quick start');
  const after = lines.findIndex((line, i) => i > quickStart && line.startsWith('## '));
  const firstScreen = lines.slice(0, after < 0 ? undefined : after);
  while (firstScreen.at(-1)?.trim() === '') firstScreen.pop();

  test(`its first screen, to the end of Quick start, fits in ${FIRST_SCREEN_LINES} lines`, () => {
    assert.notEqual(quickStart, -1, 'the README has a "## Quick start" section');
    assert.ok(
      firstScreen.length <= FIRST_SCREEN_LINES,
      `${firstScreen.length} lines from the top to the end of Quick start`,
    );
  });

  /** The commands of the first screen's code blocks, comments dropped. */
  const commands = splitFences(firstScreen.join('\n'))
    .fences.flatMap((fence) => fence.lines)
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '');

  test('its first screen has exactly the two commands', () => {
    assert.deepEqual(commands, QUICK_START);
  });

  test('CI (.ci/run) runs its second command: set-up, then the tests, stopping at the first failure', () => {
    const ci = read('.ci/run').split('\n');
    assert.ok(
      ci.some((line) => /^set -[a-z]*e/.test(line.trim())),
      '.ci/run stops at the first failing command',
    );
    const run = ci.map((line) => line.trim()).filter((line) => /^(\.\/scripts\/|pnpm\s)/.test(line));
    assert.deepEqual(run, (commands[1] ?? '').split(' && '), "the README's second command");
  });

  test(`no paragraph is over ${PARAGRAPH_WORDS} words`, () => {
    const long = paragraphs(readme)
      .map((paragraph) => ({ words: paragraph.split(/\s+/).length, start: paragraph.slice(0, 60) }))
      .filter(({ words }) => words > PARAGRAPH_WORDS);
    assert.deepEqual(long, []);
  });
});

describe('commands in the root README and docs/', () => {
  for (const file of commandFiles)
    test(`${file}: every pnpm command, ./scripts path and charts/ path exists`, () => {
      const problems: string[] = [];
      for (const text of codeTexts(read(file))) {
        for (const { name, args } of pnpmCommands(text)) {
          if (isPattern(name)) continue;
          if (!rootScripts.includes(name) && !PNPM_BUILT_INS.includes(name) && !PNPM_TOOLS.includes(name))
            problems.push(`pnpm ${name}: no root script, pnpm command or linked tool`);
          if (
            name === 'nx' &&
            args[0] === 'serve' &&
            args[1] &&
            !isPattern(args[1]) &&
            !hasServeScript(args[1])
          )
            problems.push(`pnpm nx serve ${args[1]}: no workspace controller with a serve script`);
        }
        for (const match of text.matchAll(/(?<![\w.-])\.\/scripts\/[\w./-]*[\w-]/g)) {
          const path = match[0];
          try {
            accessSync(join(root, path), constants.X_OK);
          } catch {
            problems.push(`${path}: missing or not executable`);
          }
        }
        for (const match of text.matchAll(/(?<![\w./-])charts\/[\w.-]+[\w./-]*/g)) {
          const path = match[0];
          if (!namesGenerated(path) && !existsSync(join(root, path))) problems.push(`${path}: missing`);
        }
      }
      assert.deepEqual(problems, []);
    });
});

describe('one set of names: root README, chart READMEs, NOTES.txt', () => {
  for (const chart of charts)
    test(`${chart}: the namespace and Secrets of the root README's install, everywhere`, () => {
      const install = readmeInstall(chart);
      const secrets = readmeSecrets(chart);
      const chartReadme = read(`charts/${chart}/README.md`);
      const chartCommands = installCommands(
        splitFences(chartReadme)
          .fences.filter((fence) => fence.lang === 'sh')
          .map((fence) => fence.lines.join('\n'))
          .join('\n'),
      );
      const chartInstalls = chartCommands.installs.filter((each) => chartName(each.chart) === chart);
      assert.ok(chartInstalls.length > 0, `charts/${chart}/README.md shows its helm install`);
      for (const each of chartInstalls) {
        assert.equal(each.release, install.release, `charts/${chart}/README.md: ${each.args.join(' ')}`);
        assert.equal(each.namespace, install.namespace, `charts/${chart}/README.md: ${each.args.join(' ')}`);
        for (const [key, value] of Object.entries(install.values))
          if (key.endsWith('.existingSecret'))
            assert.equal(each.values[key], value, `charts/${chart}: ${key}`);
      }
      assert.deepEqual(chartCommands.secrets, secrets, `charts/${chart}/README.md's kubectl create secret`);

      // The controller's own README, where it shows an install.
      const packageReadme = `packages/${chart}/README.md`;
      if (existsSync(join(root, packageReadme)))
        for (const fence of splitFences(read(packageReadme)).fences)
          for (const line of fence.lines.filter((each) => /^\s*helm install\s/.test(each)))
            for (const each of installCommands(line).installs)
              assert.equal(each.namespace, install.namespace, `${packageReadme}: ${line.trim()}`);

      // NOTES.txt names the release's namespace and Secret through the templates; a name written out
      // there is the README's, or `default`, where Kubernetes keeps the Events about Nodes.
      const notes = read(`charts/${chart}/templates/NOTES.txt`);
      const namespaces = [...notes.matchAll(/(?:\s-n|--namespace|namespace:)[ =]+([^\s{,}]+)/g)].map(
        (match) => match[1],
      );
      for (const namespace of namespaces)
        assert.ok(
          [install.namespace, 'default'].includes(namespace ?? ''),
          `NOTES.txt: namespace ${namespace}`,
        );
      const secretNames = [...notes.matchAll(/\bSecret (?!{{)([^\s/{,.]+)/g)].map((match) => match[1]);
      for (const name of secretNames)
        assert.ok(
          secrets.some((secret) => secret.name === name),
          `charts/${chart}/templates/NOTES.txt: Secret ${name}`,
        );
    });
});

describe('links and paths resolve inside the repository', () => {
  for (const file of linkedFiles)
    test(file, () => {
      const markdown = read(file);
      const problems: string[] = [];
      for (const target of linkTargets(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const why = unresolved(file, target, 'link');
        if (why) problems.push(`link ${target}: ${why}`);
      }
      for (const span of codeSpans(markdown)) {
        if (span.includes('/work/') || span.includes('shared/reference')) {
          problems.push(`\`${span}\`: a path outside the repository`);
          continue;
        }
        if (!looksLikePath(span) || isPattern(span) || BUILD_OUTPUT.test(span) || namesGenerated(span))
          continue;
        const why = unresolved(file, span.replace(/:\d+$/, ''), 'path');
        if (why) problems.push(`\`${span}\`: ${why}`);
      }
      assert.deepEqual(problems, []);
    });
});
