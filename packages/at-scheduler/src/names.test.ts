import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { atNameLabelValue, podNameFor } from './names.ts';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

describe('names', () => {
  it("keeps the book's <name>-pod when it fits", () => {
    assert.equal(podNameFor('example-at'), 'example-at-pod');
    assert.equal(podNameFor('a'.repeat(249)), `${'a'.repeat(249)}-pod`);
  });

  it('derives valid, distinct pod names and label values for every At name length up to 253', () => {
    const seenPods = new Set<string>();
    const seenLabels = new Set<string>();
    for (let length = 1; length <= 253; length++) {
      for (const name of [
        'a'.repeat(length),
        `${'b'.repeat(Math.max(0, length - 2))}.c`.slice(-length).replace(/^\./, 'd'),
        `${'x-'.repeat(length).slice(0, length - 1)}y`,
      ]) {
        if (!SUBDOMAIN.test(name)) continue;
        const pod = podNameFor(name);
        assert.ok(pod.length <= 253 && SUBDOMAIN.test(pod), `${name} -> ${pod}`);
        const label = atNameLabelValue(name);
        assert.ok(label.length <= 63 && LABEL_VALUE.test(label), `${name} -> ${label}`);
        assert.ok(!seenPods.has(pod), `pod name collision for ${name}`);
        seenPods.add(pod);
        seenLabels.add(label);
      }
    }
    assert.equal(seenLabels.size, seenPods.size);
  });

  it('is deterministic (the name is the idempotency key of the create)', () => {
    const long = 'z'.repeat(253);
    assert.equal(podNameFor(long), podNameFor(long));
    assert.notEqual(podNameFor(long), podNameFor(`${'z'.repeat(252)}y`));
  });
});
