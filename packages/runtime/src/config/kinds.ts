/**
 * What an option's value may be: each kind parses the raw text of a flag or environment variable and
 * says, for `--help`, the README tables and error messages, what it expects. Controllers define their
 * own kinds (an email address) with the same interface.
 */
import { parseDuration } from './duration.ts';

export interface ValueKind<T> {
  /** How `--help` shows the value: `--workers <int>`. */
  readonly placeholder: string;
  /** The error's "expected ..." part: `an integer from 1 to 1000`. */
  readonly expected: string;
  /** The value, or undefined when `raw` (trimmed, never empty) is not one. */
  parse(raw: string): T | undefined;
  /** A flag that takes no value: `--leader-elect` means true (`--leader-elect=false` still works), as Go's bool flags. */
  readonly boolean?: true;
  /** The flag may be repeated; its values and commas both separate items (`--x a,b --x c`). */
  readonly list?: true;
}

export function text(
  options: { placeholder?: string; expected?: string; pattern?: RegExp; maxLength?: number } = {},
): ValueKind<string> {
  const { pattern, maxLength = Infinity } = options;
  return {
    placeholder: options.placeholder ?? '<string>',
    expected: options.expected ?? 'a string',
    parse: (raw) => (raw.length <= maxLength && (pattern?.test(raw) ?? true) ? raw : undefined),
  };
}

export function integer(min: number, max: number): ValueKind<number> {
  return {
    placeholder: '<int>',
    expected: `an integer from ${min} to ${max}`,
    parse: (raw) => {
      if (!/^\d+$/.test(raw)) return undefined;
      const value = Number(raw);
      return value >= min && value <= max ? value : undefined;
    },
  };
}

/**
 * A client-side rate in requests per second: a decimal number above 0 and at most `max` (`20`, `0.5`,
 * `7.5`), as client-go's `rest.Config.QPS` is a float, or -1 for no limit at all (client-go's QPS below
 * 0: no rate limiter). Zero is refused rather than meaning some default, as it does in client-go.
 */
export function rateOrUnlimited(max: number): ValueKind<number> {
  return {
    placeholder: '<qps>',
    expected: `-1 (no limit) or a number above 0 and at most ${max}`,
    parse: (raw) => {
      if (raw === '-1') return -1;
      if (!/^(\d+(\.\d*)?|\.\d+)$/.test(raw)) return undefined;
      const value = Number(raw);
      return value > 0 && value <= max ? value : undefined;
    },
  };
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's `strconv.ParseBool` values, as Go's bool flags take them. */
export const boolean: ValueKind<boolean> = {
  placeholder: '',
  expected: 'true or false',
  parse: (raw) => (TRUE.has(raw) ? true : FALSE.has(raw) ? false : undefined),
  boolean: true,
};

/** One of `values`, in any letter case (`DualStack` is `dualstack`). */
export function oneOf<const T extends string>(values: readonly T[]): ValueKind<T> {
  return {
    placeholder: `<${values.join('|')}>`,
    expected: `one of ${values.join(', ')}`,
    parse: (raw) => values.find((value) => value === raw.toLowerCase()),
  };
}

/** A Go duration (see duration.ts) from `min` to `max`, both written as Go durations; in milliseconds. */
export function duration(min: string, max: string): ValueKind<number> {
  const [minMs, maxMs] = [parseDuration(min), parseDuration(max)];
  if (minMs === undefined || maxMs === undefined) throw new TypeError(`not Go durations: ${min}, ${max}`);
  return {
    placeholder: '<duration>',
    expected: `a duration from ${min} to ${max}, like 1m30s`,
    parse: (raw) => {
      const ms = parseDuration(raw);
      return ms !== undefined && ms >= minMs && ms <= maxMs ? ms : undefined;
    },
  };
}

/** Comma-separated items, each of `item`; repeated items count once. The flag may be repeated. */
export function listOf<T>(item: ValueKind<T>, expected: string): ValueKind<T[]> {
  return {
    placeholder: `${item.placeholder}[,...]`,
    expected,
    parse: (raw) => {
      const values: T[] = [];
      for (const part of new Set(raw.split(',').map((piece) => piece.trim()))) {
        const value = item.parse(part);
        if (part === '' || value === undefined) return undefined;
        values.push(value);
      }
      return values;
    },
    list: true,
  };
}

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';

/** A DNS-1123 label, as a namespace name. */
export const dnsLabel: ValueKind<string> = text({
  placeholder: '<name>',
  expected: 'a DNS-1123 label (at most 63 characters)',
  pattern: new RegExp(`^${LABEL}$`),
  maxLength: 63,
});

/** A label value, such as a sharding ring's name: letters, digits, '-', '_' and '.', at most 63. */
export const labelValue: ValueKind<string> = text({
  placeholder: '<name>',
  expected: "a label value (at most 63 letters, digits, '-', '_' or '.', alphanumeric at both ends)",
  pattern: /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/,
  maxLength: 63,
});

/** A DNS-1123 subdomain, as the name of a Lease or a Pod; `maxLength` where a field allows less than 253. */
export function dnsSubdomain(maxLength = 253): ValueKind<string> {
  return text({
    placeholder: '<name>',
    expected: `a DNS-1123 subdomain (at most ${maxLength} characters)`,
    pattern: new RegExp(`^${LABEL}(\\.${LABEL})*$`),
    maxLength,
  });
}

/** An http(s) URL; trailing slashes are dropped so that paths can be appended. */
export function httpUrl(example: string): ValueKind<string> {
  return {
    placeholder: '<url>',
    expected: `an http(s) URL such as ${example}`,
    parse: (raw) => {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return undefined;
      }
      return url.protocol === 'https:' || url.protocol === 'http:' ? raw.replace(/\/+$/, '') : undefined;
    },
  };
}

/** Where a server listens; no host means every interface. */
export interface BindAddress {
  readonly host: string | undefined;
  readonly port: number;
}

/**
 * controller-runtime's bind addresses: `:8080` (every interface), `127.0.0.1:8080`, `[::1]:8080`, port 0
 * for a free port; `0` alone serves nothing (`false`).
 */
export const bindAddress: ValueKind<BindAddress | false> = {
  placeholder: '<[host]:port>',
  expected: '[host]:port (like :8080 or 127.0.0.1:8080), or 0 for none',
  parse: (raw) => {
    if (raw === '0') return false;
    const match = /^(\[[0-9a-fA-F:.]+\]|[-a-zA-Z0-9.]*):(\d{1,5})$/.exec(raw);
    const port = Number(match?.[2]);
    if (!match || port > 65535) return undefined;
    const host = (match[1] ?? '').replace(/^\[(.*)\]$/, '$1');
    return { host: host === '' ? undefined : host, port };
  },
};
