/**
 * Splits a text stream into lines incrementally. A watch response is one JSON document per line,
 * but TCP chunks cut documents anywhere, so a line may arrive in many pieces (or many lines in one).
 */
export class LineDecoder {
  #pending = '';

  /** Feeds one chunk; returns the lines it completed (without the trailing newline). */
  push(chunk: string): string[] {
    const lines: string[] = [];
    // The pending tail never contains a newline, so only the new chunk has to be searched: this keeps a
    // large event that arrives in many small chunks linear instead of quadratic.
    const text = this.#pending + chunk;
    let start = 0;
    let newline = text.indexOf('\n', this.#pending.length);
    while (newline !== -1) {
      lines.push(text.slice(start, newline));
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    this.#pending = text.slice(start);
    return lines;
  }

  /** The unterminated remainder at end of stream (`''` if the stream ended on a line boundary). */
  end(): string {
    const rest = this.#pending;
    this.#pending = '';
    return rest;
  }
}
