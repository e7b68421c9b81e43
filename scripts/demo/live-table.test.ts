import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { LiveTable } from './live-table.ts';
import type { Row } from './table.ts';

const now = Date.parse('2026-05-01T12:00:00Z');
const row = (overrides: Partial<Row>): Row => ({
  kind: 'At',
  name: 'hello',
  status: 'PENDING',
  detail: 'soon',
  createdAt: new Date(now - 5000).toISOString(),
  converged: false,
  ...overrides,
});

class Capture extends Writable {
  text = '';
  isTTY: boolean;
  columns = 80;
  constructor(isTTY: boolean) {
    super();
    this.isTTY = isTTY;
  }
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

describe('LiveTable', () => {
  it('without a terminal prints a table only when a row changed, notes in between', () => {
    const out = new Capture(false);
    const table = new LiveTable(out);
    table.note('starting');
    table.update([row({})], now);
    table.update([row({})], now + 3000); // only the age differs
    table.update([row({ status: 'RUNNING' })], now);
    table.finish(now); // nothing changed since the last print
    assert.equal(out.text.match(/^KIND/gm)?.length, 2);
    assert.ok(out.text.startsWith('starting\n'));
    assert.ok(!out.text.includes('\u001b'), 'no terminal escapes');
  });

  it('on a terminal redraws in place and keeps notes above the table', () => {
    const out = new Capture(true);
    const table = new LiveTable(out);
    table.update([row({})], now);
    out.text = '';
    table.update([row({})], now + 1000);
    // Up three lines (blank, header, row: the cursor sits below them), erase, redraw.
    assert.ok(out.text.startsWith('\u001b[3F\u001b[J'), JSON.stringify(out.text));
    assert.match(out.text, /6s\n$/);
    out.text = '';
    table.note('a note');
    assert.ok(out.text.startsWith('\u001b[3F\u001b[Ja note\n\r\u001b[J\nKIND'), JSON.stringify(out.text));
  });
});
