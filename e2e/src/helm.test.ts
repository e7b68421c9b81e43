import { helm, pinnedHelmVersion } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { test } from 'node:test';

test('the pinned helm builds from its Go module and reports its release version', async () => {
  const { stdout } = await helm(['version', '--template', '{{ .Version }}']);
  assert.equal(stdout.trim(), await pinnedHelmVersion());
});
