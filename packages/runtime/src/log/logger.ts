/**
 * The winston logger every Loopwright controller uses.
 *
 * - Format: JSON lines when stdout is not a terminal (in a cluster) or with format `json`; one readable,
 *   coloured line per entry in a terminal or with format `console`. JSON entries carry `timestamp`
 *   (ISO 8601), `level`, `message` and the metadata as top-level fields, so `controller`, `namespace`,
 *   `name`, `reconcileID` from `logger.child({...})` are queryable fields.
 * - Level: `error`, `warn`, `info`, `http`, `verbose`, `debug`, `silly`; default `info`. The logger reads
 *   no environment: `--log-level`/`--log-format` are options, parsed with all the others (`config/`).
 * - Secrets: every entry goes through the redaction of `redact.ts` before any output format sees it, so
 *   no transport (including ones added later) can print a registered secret or a credential field.
 * - `logger.error('msg', err)` or `{ err }` keeps the error's message, stack and fields.
 */
import type { Writable } from 'node:stream';
import winston from 'winston';
import { globalSecrets, redactValue, type SecretRegistry } from './redact.ts';

export const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'console'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  /** Default `info`. */
  level?: LogLevel;
  /** Default: `console` when the output is a TTY, else `json`. */
  format?: LogFormat;
  /** Where to write. Default `process.stdout`. Tests pass a stream to capture lines. */
  stream?: Writable;
  /** Fields on every entry (e.g. `{ controller: 'at-scheduler' }`). */
  defaultMeta?: Record<string, unknown>;
  /** Default: the process-wide registry `registerSecret` fills. */
  secrets?: SecretRegistry;
}

const MESSAGE = Symbol.for('message');
const LEVEL = Symbol.for('level');
const SPLAT = Symbol.for('splat');

export function createLogger(options: LoggerOptions = {}): winston.Logger {
  const stream = options.stream ?? process.stdout;
  const level = options.level ?? 'info';
  const format = options.format ?? (isTTY(stream) ? 'console' : 'json');
  const secrets = options.secrets ?? globalSecrets;
  const output =
    format === 'json'
      ? winston.format.combine(winston.format.timestamp(), winston.format.json())
      : winston.format.combine(winston.format.timestamp(), consoleLine(isTTY(stream)));
  const logger: winston.Logger = winston.createLogger({
    level,
    levels: winston.config.npm.levels,
    format: winston.format.combine(
      enabledLevelsOnly(() => logger),
      errorsAsFields(),
      redaction(secrets),
      output,
    ),
    defaultMeta: options.defaultMeta,
    transports: [new winston.transports.Stream({ stream })],
  });
  return skipDisabledLevels(logger);
}

/**
 * winston formats every entry before its transports compare the level, so a `debug` line at level
 * `info` cost about 8 us of redaction and JSON for nothing; reconciles log several. Dropping an entry
 * of a disabled level first makes it about 1 us (the level set at creation or changed later alike).
 */
function enabledLevelsOnly(current: () => winston.Logger): winston.Logform.Format {
  return winston.format((info) => (current().isLevelEnabled(info.level) ? info : false))();
}

/**
 * winston builds an entry and writes it through its stream pipeline before any format or transport
 * looks at the level: 0.6-0.8 us a `debug` call in a tight loop here (1-1.5 us silent), and 3.5 % of
 * the controller's busy time in a V8 profile of the at-scheduler bench, reconciles making several each.
 * So the level methods of `logger` and of its children (`child` derives from it) return at once when
 * the level is disabled or the logger silent (0.15-0.3 us; 0.03 us silent).
 * `logger.log(level, ...)` still goes the whole way, to `enabledLevelsOnly`.
 */
function skipDisabledLevels(logger: winston.Logger): winston.Logger {
  const methods = logger as unknown as Record<string, winston.LeveledLogMethod>;
  for (const level of Object.keys(logger.levels)) {
    const write = methods[level];
    if (write === undefined) continue;
    methods[level] = function (this: winston.Logger, ...args: Parameters<winston.LeveledLogMethod>) {
      return this.silent || !this.isLevelEnabled(level) ? this : write.apply(this, args);
    } as winston.LeveledLogMethod;
  }
  return logger;
}

/** A logger that drops everything: the default for components whose caller passes none. */
export function createSilentLogger(): winston.Logger {
  return skipDisabledLevels(
    winston.createLogger({
      silent: true,
      transports: [new winston.transports.Console({ silent: true })],
    }),
  );
}

function isTTY(stream: Writable): boolean {
  return (stream as Writable & { isTTY?: boolean }).isTTY === true;
}

type Info = winston.Logform.TransformableInfo;

/**
 * `logger.error(err)` / `logger.warn('msg', err)`: winston merges an Error's message into the entry but
 * drops its stack and fields; keep them under `error`.
 */
const errorsAsFields = winston.format((original: Info) => {
  let info = original;
  if (original instanceof Error) {
    // `logger.error(err)`: winston passes the Error itself as the entry, whose `message` and `stack` are
    // not enumerable (JSON would drop them). Rebuild a plain entry that carries the error as a field.
    const error: Error = original;
    const rebuilt: Record<string | symbol, unknown> = {
      level: original.level,
      message: error.message,
      error,
    };
    for (const symbol of Object.getOwnPropertySymbols(original))
      rebuilt[symbol] = (original as unknown as Record<symbol, unknown>)[symbol];
    info = rebuilt as Info;
  }
  const record = info as Record<string | symbol, unknown>;
  if (info.message instanceof Error) {
    const error = info.message;
    info.message = error.message;
    record.error = error;
  }
  const splat = record[SPLAT];
  if (Array.isArray(splat)) {
    for (const item of splat) {
      if (item instanceof Error && record.error === undefined) record.error = item;
    }
  }
  if (record.stack !== undefined && record.error === undefined && typeof record.stack === 'string') {
    // winston copies an Error's own `stack` when the Error itself was the meta argument.
    record.error = { message: info.message, stack: record.stack };
    delete record.stack;
  }
  return info;
});

/** Redacts the message and all string-keyed metadata in place; symbol keys (winston internals) stay. */
function redaction(secrets: SecretRegistry): winston.Logform.Format {
  return winston.format((info: Info) => {
    const record = info as Record<string | symbol, unknown>;
    for (const key of Object.keys(record)) {
      if (key === 'level') continue;
      const redacted = redactValue({ [key]: record[key] }, secrets) as Record<string, unknown>;
      record[key] = redacted[key];
    }
    record[SPLAT] = undefined;
    return info;
  })();
}

const levelColours: Record<string, string> = {
  error: '\u001b[31m',
  warn: '\u001b[33m',
  info: '\u001b[32m',
  http: '\u001b[36m',
  verbose: '\u001b[36m',
  debug: '\u001b[34m',
  silly: '\u001b[35m',
};
const dim = '\u001b[2m';
const reset = '\u001b[0m';

/** Keys printed first, in this order, because every reconcile line has them. */
const leadingKeys = ['controller', 'namespace', 'name', 'reconcileID'];

/**
 * `12:00:00.123 INFO  message controller=x namespace=y name=z reconcileID=r key=value ...` on one line;
 * an error's stack follows on indented lines. Colours only when writing to a terminal.
 */
function consoleLine(colour: boolean): winston.Logform.Format {
  return winston.format((info: Info) => {
    const record = info as Record<string | symbol, unknown>;
    const levelName = typeof record[LEVEL] === 'string' ? record[LEVEL] : info.level;
    const time = typeof record.timestamp === 'string' ? record.timestamp.slice(11, 23) : '';
    const keys = Object.keys(record).filter((k) => k !== 'level' && k !== 'message' && k !== 'timestamp');
    keys.sort((a, b) => rank(a) - rank(b));
    let stack: string | undefined;
    const fields: string[] = [];
    for (const key of keys) {
      const value = record[key];
      if (value === undefined) continue;
      if (key === 'error' && typeof value === 'object' && value !== null) {
        const error = value as { message?: unknown; stack?: unknown };
        if (typeof error.stack === 'string') stack = error.stack;
        fields.push(
          `error=${quote(typeof error.message === 'string' ? error.message : JSON.stringify(value))}`,
        );
        continue;
      }
      const text = quote(typeof value === 'string' ? value : JSON.stringify(value));
      fields.push(colour ? `${dim}${key}=${reset}${text}` : `${key}=${text}`);
    }
    const levelText = levelName.toUpperCase().padEnd(5);
    const levelOut = colour ? `${levelColours[levelName] ?? ''}${levelText}${reset}` : levelText;
    const message = typeof info.message === 'string' ? info.message : JSON.stringify(info.message);
    let line = `${time} ${levelOut} ${message.replace(/\n/g, '\\n')}${fields.length ? ` ${fields.join(' ')}` : ''}`;
    if (stack) line += `\n${stack.split('\n').slice(1).join('\n')}`;
    record[MESSAGE] = line;
    return info;
  })();
}

function rank(key: string): number {
  const index = leadingKeys.indexOf(key);
  return index === -1 ? leadingKeys.length : index;
}

/** Values with spaces, quotes or `=` are JSON-quoted so a line stays parseable by eye and by tools. */
function quote(text: string): string {
  return /[\s"=]/.test(text) || text === '' ? JSON.stringify(text) : text;
}
