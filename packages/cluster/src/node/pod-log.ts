/**
 * Reading a container's log through the API server without ever mistaking the kubelet's error for log
 * text. The kubelet answers a log request with 200 before it opens the log file (it writes zero bytes
 * first, which commits the status), so when the file is already gone (a pod deleted by a rolling update)
 * the body is its error message, e.g. `failed to try resolving symlinks in path ".../0.log"`, under a
 * 200. Asked with `timestamps=true`, every line the container wrote starts with its RFC 3339 timestamp
 * and a space; the kubelet's own message does not. So each line is checked and the timestamp stripped:
 * what comes back is exactly the container's output, or an error.
 */

/** The query parameter that makes every log line start with its timestamp. */
export const TIMESTAMPED_LOG_QUERY = { timestamps: 'true' } as const;

/** A log read whose body was not the container's log (the kubelet's error text under a 200). */
export class PodLogReadError extends Error {
  override readonly name = 'PodLogReadError';
  /** What the kubelet sent instead of log lines. */
  readonly body: string;
  constructor(what: string, body: string) {
    super(`${what}: the kubelet answered with something other than log lines: ${body.slice(0, 500)}`);
    this.body = body;
  }
}

// time.RFC3339Nano as the kubelet formats it: trailing zeros of the fraction trimmed, no fraction at all
// on a whole second.
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d) /;

/** One line as read (without its newline) to the container's text, or undefined if it is not a log line. */
function stripTimestamp(line: string): string | undefined {
  const match = TIMESTAMP.exec(line);
  return match ? line.slice(match[0].length) : undefined;
}

/**
 * A timestamped log body read as it arrives (a followed log comes in chunks that split lines
 * anywhere). {@link text} holds the complete lines read so far, timestamps stripped; once a line is not
 * a log line the read has failed ({@link failure}) and nothing more is added.
 */
export class TimestampedLogReader {
  readonly #what: string;
  #text = '';
  #pending = '';
  #failure: PodLogReadError | undefined;

  /** `what` names the log in an error, e.g. `log of pod ns/name`. */
  constructor(what: string) {
    this.#what = what;
  }

  /** The container's output read so far: complete lines only, each with its newline. */
  get text(): string {
    return this.#text;
  }

  /** Set once the body proved not to be the container's log. */
  get failure(): PodLogReadError | undefined {
    return this.#failure;
  }

  push(chunk: string): void {
    if (this.#failure) return;
    this.#pending += chunk;
    const lines = this.#pending.split('\n');
    this.#pending = lines.pop() ?? '';
    for (const [index, line] of lines.entries()) {
      const content = stripTimestamp(line);
      if (content === undefined) {
        this.#fail(`${lines.slice(index).join('\n')}\n${this.#pending}`);
        return;
      }
      this.#text += `${content}\n`;
    }
  }

  /**
   * The body has ended: a last line without a newline is the container's if it is timestamped (kept
   * without a newline, as the container wrote it).
   */
  end(): void {
    if (this.#failure || this.#pending === '') return;
    const content = stripTimestamp(this.#pending);
    if (content === undefined) this.#fail(this.#pending);
    else this.#text += content;
    this.#pending = '';
  }

  #fail(body: string): void {
    this.#failure = new PodLogReadError(this.#what, body);
  }
}

/**
 * A whole timestamped log body as the container's output; throws {@link PodLogReadError} if any line is
 * not the container's.
 */
export function readTimestampedLog(what: string, body: string): string {
  const reader = new TimestampedLogReader(what);
  reader.push(body);
  reader.end();
  if (reader.failure) throw reader.failure;
  return reader.text;
}
