import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withReference } from './tsconfig-references.ts';

const NEW = 'packages/widget-sync/tsconfig.build.json';

describe('withReference', () => {
  it('one line after the last reference, in its indentation and spacing', () => {
    const text = '{\n  "files": [],\n  "references": [\n\t\t{"path":"a"},\n\t\t{"path":"b"}\n  ]\n}\n';
    assert.equal(
      withReference(text, NEW),
      `{\n  "files": [],\n  "references": [\n\t\t{"path":"a"},\n\t\t{"path":"b"},\n\t\t{"path":"${NEW}"}\n  ]\n}\n`,
    );
  });

  it('undefined (the caller rewrites the file) when the references are not one per line', () => {
    for (const text of [
      '{ "files": [], "references": [{ "path": "a" }] }',
      '{\n  "references": [\n    {\n      "path": "a"\n    }\n  ]\n}\n',
      '{\n  "files": []\n}\n',
      // The last such line is no reference of the array.
      '{\n  "references": [\n    { "path": "a" }\n  ],\n  "x": [\n    { "path": "b" }\n  ]\n}\n',
      // A trailing comma: not JSON as the compiler reads it here, so left to the JSON rewrite.
      '{\n  "references": [\n    { "path": "a" },\n  ]\n}\n',
    ])
      assert.equal(withReference(text, NEW), undefined, text);
  });
});
