import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { atSummary } from './summary.ts';

describe('atSummary', () => {
  const run = { pod: 'hello-pod', nodeName: 'n1', exitCode: 0, output: 'hello\n' };

  it('names the node, the exit code and the output of a pod a kubelet ran', () => {
    assert.equal(
      atSummary('hello', run, false),
      'At hello: its command ran once, when it was due, in pod hello-pod on node n1: exit code 0, output "hello"',
    );
  });

  it('claims no run where the demo played kubelet', () => {
    const line = atSummary('hello', { ...run, nodeName: undefined, output: undefined }, true);
    assert.match(line, /the demo reported it finished \(exit code 0\) and the command itself did not run$/);
  });

  it('claims no node where none ran the pod, and no output where the log could not be read', () => {
    assert.equal(
      atSummary('hello', { ...run, nodeName: undefined, output: undefined }, false),
      'At hello: its pod hello-pod was created once, when it was due, and finished with exit code 0',
    );
    assert.equal(
      atSummary('hello', { ...run, output: undefined }, false),
      'At hello: its command ran once, when it was due, in pod hello-pod on node n1: exit code 0',
    );
  });
});
