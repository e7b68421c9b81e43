import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadAtCrd } from './crd.ts';
import { AT_GROUP, AT_KIND, AT_PLURAL, AT_VERSION } from './resource.ts';

// The generated types are checked against the CRD by scripts/crd-types.test.ts.
describe('the CRD', () => {
  it('names the resource the controller watches', () => {
    const crd = loadAtCrd();
    assert.equal(crd.spec.group, AT_GROUP);
    assert.equal(crd.spec.names.kind, AT_KIND);
    assert.equal(crd.spec.names.plural, AT_PLURAL);
    assert.deepEqual(crd.spec.names.shortNames, ['at']);
    assert.deepEqual(
      crd.spec.versions.map((v) => v.name),
      [AT_VERSION],
    );
    assert.deepEqual(
      crd.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name),
      ['Schedule', 'Command', 'Phase', 'Outcome', 'Age'],
    );
  });
});
