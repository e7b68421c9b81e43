/**
 * A secret read from a file and re-read when the file changes, so that a corrected key in a Kubernetes
 * Secret is used without a restart. The kubelet updates a Secret volume atomically: it writes a new
 * timestamped directory and renames a `..data` symlink onto it, and the mounted file is a symlink
 * through `..data`. Each {@link FileSecret.value} call therefore stats the path (following symlinks):
 * a new file has a new inode, a rewrite a new mtime/ctime/size, and only then is the file read again.
 * One stat per use, no watcher: nothing to close, no event to miss, and changes are seen at once.
 *
 * A change that leaves no usable value (a missing, unreadable, empty or malformed file) keeps the last
 * good value and is reported once per change to the observer, never with the value itself.
 */
import { readFileSync, statSync, type BigIntStats } from 'node:fs';
import { registerSecret } from '../log/redact.ts';
import { ConfigError } from './config-error.ts';
import type { Secret } from './option.ts';

export type SecretReload =
  | { readonly outcome: 'reloaded'; readonly source: string; readonly path: string }
  | { readonly outcome: 'failed'; readonly source: string; readonly path: string; readonly problem: string };

export interface FileSecretOptions {
  readonly path: string;
  /** The flag or variable that named the file, for messages. */
  readonly source: string;
  /** What a value must look like (`an API token without whitespace`), for messages. */
  readonly expected: string;
  readonly valid: (value: string) => boolean;
}

export class FileSecret implements Secret {
  readonly source: string;
  readonly path: string;
  readonly #options: FileSecretOptions;
  readonly #observers: ((reload: SecretReload) => void)[] = [];
  #value: string;
  /** The stat of the file `#value` came from, or of the last failed attempt: a change is a difference. */
  #version: string;

  /** Reads the file once. @throws ConfigError naming `source` when it gives no usable value. */
  constructor(options: FileSecretOptions) {
    this.#options = options;
    this.source = options.source;
    this.path = options.path;
    const read = this.#read();
    if ('problem' in read) throw new ConfigError(options.source, read.problem);
    this.#value = read.value;
    this.#version = read.version;
    registerSecret(read.value);
  }

  value(): string {
    const version = statVersion(this.path);
    if (version === this.#version) return this.#value;
    const read = this.#read();
    this.#version = read.version;
    if ('problem' in read) {
      this.#notify({ outcome: 'failed', source: this.source, path: this.path, problem: read.problem });
      return this.#value;
    }
    if (read.value !== this.#value) {
      // Registered before it can reach a request, an error message or a log line.
      registerSecret(read.value);
      this.#value = read.value;
      this.#notify({ outcome: 'reloaded', source: this.source, path: this.path });
    }
    return this.#value;
  }

  /** Called on each change of the file after start-up: a new value, or why it was not taken. */
  observe(observer: (reload: SecretReload) => void): void {
    this.#observers.push(observer);
  }

  #notify(reload: SecretReload): void {
    for (const observer of this.#observers) observer(reload);
  }

  #read(): { value: string; version: string } | { problem: string; version: string } {
    const { path, expected, valid } = this.#options;
    const version = statVersion(path);
    let value: string;
    try {
      value = readFileSync(path, 'utf8').trim();
    } catch (error) {
      return { problem: `cannot read "${path}": ${errorCode(error)}`, version };
    }
    if (value === '') return { problem: `"${path}" is empty`, version };
    if (!valid(value)) return { problem: `"${path}" does not hold ${expected}`, version };
    return { value, version };
  }
}

/** A secret given directly as an environment variable's value: it never changes. */
export function fixedSecret(value: string, source: string): Secret {
  registerSecret(value);
  return { source, value: () => value };
}

function statVersion(path: string): string {
  let stats: BigIntStats;
  try {
    stats = statSync(path, { bigint: true });
  } catch (error) {
    return `error ${errorCode(error)}`;
  }
  return [stats.dev, stats.ino, stats.size, stats.mtimeNs, stats.ctimeNs].join(':');
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
