/** Structured log sink; winston and console-like loggers fit. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Leadership changes and failures to stderr; per-attempt detail (debug) dropped. */
export const consoleLogger: Logger = {
  debug: () => undefined,
  info: (message, fields) => {
    console.error(message, fields ?? {});
  },
  warn: (message, fields) => {
    console.warn(message, fields ?? {});
  },
  error: (message, fields) => {
    console.error(message, fields ?? {});
  },
};

/** The text of a thrown value, for log fields. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
