import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PodLogReadError, TimestampedLogReader, readTimestampedLog } from './pod-log.ts';

// What the kubelet sends with timestamps=true: each line led by its RFC 3339 time (nanoseconds trimmed).
const body = [
  '2026-11-28T10:00:00.123456789Z {"message":"target cluster"}\n',
  '2026-11-28T10:00:01Z second line\n',
  '2026-11-28T10:00:01.5+01:00 \n',
  '2026-11-28T10:00:02.25Z no newline at the end',
].join('');
/** The reader's failure, read afresh (a getter the compiler would otherwise keep narrowed). */
const failureOf = (reader: TimestampedLogReader): PodLogReadError | undefined => reader.failure;

const kubeletError =
  'failed to try resolving symlinks in path "/var/log/pods/ns_pod_uid/controller/0.log": lstat /var/log/pods/ns_pod_uid/controller/0.log: no such file or directory';

test('a timestamped body reads as the container wrote it: timestamps gone, empty lines and a last line without newline kept', () => {
  assert.equal(
    readTimestampedLog('log of pod a', body),
    '{"message":"target cluster"}\nsecond line\n\nno newline at the end',
  );
  assert.equal(readTimestampedLog('log of pod a', ''), '');
});

test("the kubelet's error text under a 200 is an error naming the log, never log text", () => {
  assert.throws(
    () => readTimestampedLog('log of pod ns/a', kubeletError),
    (error: unknown) =>
      error instanceof PodLogReadError &&
      error.body === kubeletError &&
      error.message.startsWith(
        'log of pod ns/a: the kubelet answered with something other than log lines: failed',
      ),
  );
  // After good lines too, and in the middle of a body.
  assert.throws(() => readTimestampedLog('x', `2026-11-28T10:00:00Z ok\n${kubeletError}`), PodLogReadError);
  assert.throws(() => readTimestampedLog('x', `2026-11-28T10:00:00Z ok\n${kubeletError}\n`), PodLogReadError);
});

test('a line is the container’s only with a whole timestamp and its space', () => {
  for (const line of [
    '2026-11-28T10:00:00Zno space',
    '2026-11-28 10:00:00Z space instead of T',
    '2026-11-28T10:00:00 no zone',
    '2026-11-28T10:00:00.Z empty fraction',
    '2026-11-28T10:00:00.1234567890Z ten digits',
    ' 2026-11-28T10:00:00Z leading space',
  ])
    assert.throws(() => readTimestampedLog('x', `${line}\n`), PodLogReadError, line);
});

test('chunks split anywhere: only complete lines show while the body arrives', () => {
  const reader = new TimestampedLogReader('x');
  for (const chunk of [body.slice(0, 10), body.slice(10, 70), body.slice(70, 75)]) reader.push(chunk);
  assert.equal(reader.text, '{"message":"target cluster"}\n');
  reader.push(body.slice(75));
  assert.equal(reader.text, '{"message":"target cluster"}\nsecond line\n\n');
  reader.end();
  assert.equal(reader.failure, undefined);
  assert.equal(reader.text, '{"message":"target cluster"}\nsecond line\n\nno newline at the end');
});

test('once the body proves not to be the log, the reader keeps what it had and reads nothing more', () => {
  const reader = new TimestampedLogReader('log of pod ns/a');
  reader.push('2026-11-28T10:00:00Z ok\n');
  reader.push(kubeletError.slice(0, 20));
  assert.equal(reader.failure, undefined, 'an incomplete line is not judged yet');
  reader.push(`${kubeletError.slice(20)}\n2026-11-28T10:00:01Z later\n`);
  const failure = failureOf(reader);
  assert.ok(failure instanceof PodLogReadError);
  assert.equal(failure.body, `${kubeletError}\n2026-11-28T10:00:01Z later\n`);
  assert.equal(reader.text, 'ok\n');
  reader.end();
  assert.equal(reader.text, 'ok\n');
});

test('an error text without a newline is found at the end of the body', () => {
  const reader = new TimestampedLogReader('x');
  reader.push(kubeletError);
  assert.equal(reader.failure, undefined);
  reader.end();
  assert.ok(failureOf(reader) instanceof PodLogReadError);
  assert.equal(reader.text, '');
});
