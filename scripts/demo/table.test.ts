import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatAge, renderTable, tableSignature, type Row } from './table.ts';

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

describe('renderTable', () => {
  it('pads every column but the last to its widest cell plus three spaces, like kubectl', () => {
    const lines = renderTable(
      [
        row({}),
        row({ kind: 'MailgunCluster', name: 'demo', status: 'RequestSent', detail: 'message <id>' }),
        row({ kind: 'Node', name: 'n', status: '-', detail: '', createdAt: undefined }),
      ],
      now,
    );
    assert.deepEqual(lines, [
      'KIND             NAME    STATUS        DETAIL         AGE',
      'At               hello   PENDING       soon           5s',
      'MailgunCluster   demo    RequestSent   message <id>   5s',
      'Node             n       -             -              -',
    ]);
  });

  it('renders only the header when there are no rows', () => {
    assert.deepEqual(renderTable([], now), ['KIND   NAME   STATUS   DETAIL   AGE']);
  });
});

describe('formatAge', () => {
  for (const [ms, expected] of [
    [-5000, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [119_999, '119s'],
    [120_000, '2m'],
    [150_000, '2m30s'],
    [10 * 60_000, '10m'],
    [3 * 3_600_000, '3h'],
    [3 * 3_600_000 + 5 * 60_000, '3h5m'],
    [9 * 3_600_000, '9h'],
    [50 * 3_600_000, '2d'],
  ] as const)
    it(`${ms} ms is ${expected}`, () => {
      assert.equal(formatAge(ms), expected);
    });
});

describe('tableSignature', () => {
  it('ignores ages and convergence flags, sees every shown cell', () => {
    const base = [row({})];
    assert.equal(tableSignature(base), tableSignature([row({ createdAt: new Date(now).toISOString() })]));
    assert.notEqual(tableSignature(base), tableSignature([row({ status: 'RUNNING' })]));
    assert.notEqual(tableSignature(base), tableSignature([row({ detail: 'later' })]));
  });
});
