/**
 * The table on screen while the controllers work. On a terminal it is redrawn in place (ages tick);
 * elsewhere (CI, a pipe, a test) a new table is printed only when a row changed, so logs stay short.
 * Lines the demo prints meanwhile go through {@link LiveTable.note}, above the table.
 */
import type { Writable } from 'node:stream';
import { renderTable, tableSignature, type Row } from './table.ts';

// ANSI: move to the start of the line `n` lines up, erase to the end of the screen.
const up = (lines: number): string => (lines > 0 ? `\u001b[${lines}F` : '\r');
const ERASE_DOWN = '\u001b[J';

export class LiveTable {
  readonly #out: Writable & { isTTY?: boolean; columns?: number };
  #drawnLines = 0;
  #rows: readonly Row[] = [];
  #lastSignature = '';
  #finished = false;

  constructor(out: Writable & { isTTY?: boolean; columns?: number }) {
    this.#out = out;
  }

  get interactive(): boolean {
    return this.#out.isTTY === true;
  }

  update(rows: readonly Row[], nowMs = Date.now()): void {
    if (this.#finished) return;
    this.#rows = rows;
    if (this.interactive) {
      this.#redraw(nowMs);
      return;
    }
    const signature = tableSignature(rows);
    if (signature === this.#lastSignature) return;
    this.#lastSignature = signature;
    this.#out.write(`\n${renderTable(rows, nowMs).join('\n')}\n`);
  }

  /** A line for the reader, printed above the table (which is redrawn below it on a terminal). */
  note(line: string): void {
    if (!this.interactive || this.#drawnLines === 0) {
      this.#out.write(`${line}\n`);
      return;
    }
    this.#out.write(`${up(this.#drawnLines)}${ERASE_DOWN}${line}\n`);
    this.#drawnLines = 0;
    this.#redraw(Date.now());
  }

  /**
   * Stops drawing for good, leaving the latest table on screen (printing it where it changed since the
   * last print); later lines go below it. Idempotent.
   */
  finish(nowMs = Date.now()): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#rows.length === 0) return;
    if (this.interactive) this.#redraw(nowMs);
    else if (tableSignature(this.#rows) !== this.#lastSignature)
      this.#out.write(`\n${renderTable(this.#rows, nowMs).join('\n')}\n`);
    this.#lastSignature = tableSignature(this.#rows);
    this.#drawnLines = 0;
  }

  #redraw(nowMs: number): void {
    // A line wider than the terminal wraps and breaks the cursor arithmetic: cut it instead.
    const width = this.#out.columns ?? 200;
    const table = renderTable(this.#rows, nowMs).map((line) =>
      line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line,
    );
    // Set off from the lines above it, as where it is printed rather than drawn.
    const lines = ['', ...table];
    this.#out.write(`${up(this.#drawnLines)}${ERASE_DOWN}${lines.join('\n')}\n`);
    this.#drawnLines = lines.length;
  }
}
