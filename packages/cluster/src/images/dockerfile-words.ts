/**
 * The word rules of Dockerfile arguments, as BuildKit's shell lexer applies them to ARG, ENV, LABEL,
 * WORKDIR, USER, EXPOSE, COPY and FROM: whitespace separates words, quotes group them ('…' literally,
 * "…" with `\"`, `\\`, `\$` escapes and expansion), a backslash outside quotes escapes the next
 * character, and `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR:+alternative}` expand from `variables`
 * (unset expands to nothing).
 */
export type Variables = ReadonlyMap<string, string>;

const namePattern = /^[A-Za-z_][A-Za-z0-9_]*/;

function expansion(text: string, start: number, variables: Variables): { value: string; end: number } {
  // text[start] is '$'.
  if (text[start + 1] === '{') {
    const close = text.indexOf('}', start + 2);
    if (close < 0) throw new Error(`missing } in ${text}`);
    const inner = text.slice(start + 2, close);
    const match = /^([A-Za-z_][A-Za-z0-9_]*)(?::([-+])(.*))?$/s.exec(inner);
    if (!match?.[1]) throw new Error(`unsupported substitution \${${inner}}`);
    const value = variables.get(match[1]);
    const word = match[3] ?? '';
    const substituted =
      match[2] === '-'
        ? value
          ? value
          : expandWord(word, variables)
        : match[2] === '+'
          ? value
            ? expandWord(word, variables)
            : ''
          : (value ?? '');
    return { value: substituted, end: close + 1 };
  }
  const name = namePattern.exec(text.slice(start + 1))?.[0];
  if (!name) return { value: '$', end: start + 1 };
  return { value: variables.get(name) ?? '', end: start + 1 + name.length };
}

/** Splits `text` into words, removing quotes and escapes and expanding variables. */
export function words(text: string, variables: Variables): string[] {
  return lex(text, variables, true);
}

/** `text` as one word: expansion and quote removal without splitting (WORKDIR, USER, a legacy ENV value). */
export function expandWord(text: string, variables: Variables): string {
  return lex(text, variables, false).join('');
}

function lex(text: string, variables: Variables, split: boolean): string[] {
  const result: string[] = [];
  let word: string | undefined;
  let i = 0;
  const append = (value: string) => {
    word = (word ?? '') + value;
  };
  while (i < text.length) {
    const char = text[i] ?? '';
    if (split && /\s/.test(char)) {
      if (word !== undefined) result.push(word);
      word = undefined;
      i++;
    } else if (char === '\\') {
      append(text[i + 1] ?? '');
      i += 2;
    } else if (char === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new Error(`unterminated ' in ${text}`);
      append(text.slice(i + 1, close));
      i = close + 1;
    } else if (char === '"') {
      append('');
      i++;
      for (;;) {
        const inner = text[i];
        if (inner === undefined) throw new Error(`unterminated " in ${text}`);
        if (inner === '"') break;
        if (inner === '\\' && ['"', '\\', '$'].includes(text[i + 1] ?? '')) {
          append(text[i + 1] ?? '');
          i += 2;
        } else if (inner === '$') {
          const { value, end } = expansion(text, i, variables);
          append(value);
          i = end;
        } else {
          append(inner);
          i++;
        }
      }
      i++;
    } else if (char === '$') {
      const { value, end } = expansion(text, i, variables);
      // An unquoted expansion to nothing makes no word, as in a shell.
      if (value !== '') append(value);
      i = end;
    } else {
      append(char);
      i++;
    }
  }
  if (word !== undefined) result.push(word);
  return result;
}

export interface KeyValue {
  key: string;
  value: string;
}

/**
 * ENV's and LABEL's `key=value …` pairs; ENV also accepts the legacy `ENV key value with spaces`.
 * A word without `=` (other than the legacy form) throws.
 */
export function keyValues(text: string, variables: Variables, allowLegacy: boolean): KeyValue[] {
  const legacy = /^([^\s=]+)\s+(.*)$/s.exec(text.trim());
  if (allowLegacy && legacy?.[1] && !/^\S*=/.test(text.trim())) {
    return [{ key: legacy[1], value: expandWord(legacy[2] ?? '', variables) }];
  }
  return words(text, variables).map((word) => {
    const equals = word.indexOf('=');
    if (equals <= 0) throw new Error(`"${word}" is not key=value`);
    return { key: word.slice(0, equals), value: word.slice(equals + 1) };
  });
}

/** ARG's `name` or `name=default` words; the default is expanded, the name is not. */
export function argDeclarations(
  text: string,
  variables: Variables,
): { name: string; defaultValue?: string }[] {
  return words(text, variables).map((word) => {
    const equals = word.indexOf('=');
    return equals < 0
      ? { name: word }
      : { name: word.slice(0, equals), defaultValue: word.slice(equals + 1) };
  });
}
