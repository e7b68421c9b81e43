/**
 * The identifiers the TypeScript templates use: what they import (from the runtime, the test helpers,
 * node: modules), declare themselves (`Running`, `StatusPatch`, `MERGE`...) and take from the globals
 * (`Date`, `Promise`, `Record`...). A kind named like one of them would clash with it where the kind's
 * type is imported, so the generator imports the kind's type under another name there (names.ts,
 * `kindType`). Read from the templates themselves, so that a template that starts using a new name is
 * covered without a list to maintain.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Stands for every EJS output tag (`<%= kind %>`, `<%- ownedExample.body %>`): an identifier with it in
 * is derived from the options (`kube<%= kind %>Api`, `<%= constantPrefix %>_GROUP`), not one of the
 * template's own. Nothing a template writes contains it.
 */
const DERIVED = 'ZzDerivedZz';

/** The identifiers of a TypeScript template's code: comments, string text and EJS tags left out. */
export function templateCodeIdentifiers(template: string): Set<string> {
  const code = template.replace(/<%[=-][\s\S]*?[-_]?%>/g, DERIVED).replace(/<%[_#]?[\s\S]*?[-_]?%>/g, ' ');
  const identifiers = new Set<string>();
  // A number (`30_000`) is matched whole, so that no part of it passes for an identifier.
  for (const word of codeOf(code).match(/[A-Za-z_$][\w$]*|[0-9][\w.]*/g) ?? [])
    if (!/^[0-9]/.test(word) && !word.includes(DERIVED)) identifiers.add(word);
  return identifiers;
}

/** Every `*.ts.template` under `dir`, recursively. */
function typeScriptTemplates(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typeScriptTemplates(path);
    return entry.name.endsWith('.ts.template') ? [path] : [];
  });
}

/** The identifiers of every TypeScript template under `dir` (the generator's files/), sorted. */
export function templatesIdentifiers(dir: string): string[] {
  const all = new Set<string>();
  for (const path of typeScriptTemplates(dir))
    for (const identifier of templateCodeIdentifiers(readFileSync(path, 'utf8'))) all.add(identifier);
  return [...all].sort();
}

/**
 * `source` with its comments, the text of its string, template and regular expression literals blanked
 * out (a template literal's `${...}` stays: it is code). Enough of a TypeScript lexer for the templates.
 */
function codeOf(source: string): string {
  let out = '';
  /** The open `${` of the template literals around the current position: their brace depth. */
  const templates: number[] = [];
  let depth = 0;
  /** The last character of code that is no white space: a `/` after one of these starts a regex. */
  let previous = '';
  let i = 0;
  const skipQuoted = (quote: string): void => {
    for (i += 1; i < source.length && source[i] !== quote; i += 1) if (source[i] === '\\') i += 1;
    i += 1;
  };
  const skipTemplateText = (): void => {
    // From after a backquote or a closing `}` of `${...}`: to the closing backquote or the next `${`.
    for (; i < source.length; i += 1) {
      if (source[i] === '\\') i += 1;
      else if (source[i] === '`') {
        i += 1;
        out += "''";
        return;
      } else if (source.startsWith('${', i)) {
        i += 2;
        templates.push(depth);
        out += ' ';
        return;
      }
    }
  };
  while (i < source.length) {
    const char = source[i] ?? '';
    if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      i = end === -1 ? source.length : end;
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      i = end === -1 ? source.length : end + 2;
      out += ' ';
    } else if (char === "'" || char === '"') {
      skipQuoted(char);
      out += "''";
      previous = "'";
    } else if (char === '`') {
      i += 1;
      skipTemplateText();
      previous = "'";
    } else if (char === '/' && (previous === '' || '(,=:[!&|?{};+-*%<>~^'.includes(previous))) {
      // A regular expression literal: to its unescaped closing slash outside a character class.
      let inClass = false;
      for (i += 1; i < source.length; i += 1) {
        const c = source[i];
        if (c === '\\') i += 1;
        else if (c === '[') inClass = true;
        else if (c === ']') inClass = false;
        else if (c === '/' && !inClass) break;
      }
      i += 1;
      while (/[a-z]/.test(source[i] ?? '')) i += 1;
      out += ' ';
      previous = ')';
    } else if (char === '}' && templates.length > 0 && templates.at(-1) === depth) {
      templates.pop();
      i += 1;
      skipTemplateText();
      previous = "'";
    } else {
      if (char === '{') depth += 1;
      else if (char === '}') depth -= 1;
      if (!/\s/.test(char)) previous = char;
      out += char;
      i += 1;
    }
  }
  return out;
}
