import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_NAME_MAX_LENGTH, eventName } from './event-name.ts';

/** The API server's check for names that are DNS subdomains (`IsDNS1123Subdomain`). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const nanos = BigInt(Date.UTC(2025, 5, 1, 12, 0, 0, 123)) * 1_000_000n;
const hex = nanos.toString(16);

function assertValidEventName(name: string): void {
  assert.ok(name.length <= EVENT_NAME_MAX_LENGTH, `${name.length} characters: ${name}`);
  assert.match(name, DNS_SUBDOMAIN);
}

describe('eventName', () => {
  it("keeps client-go's <name>.<hex nanoseconds> for a short name", () => {
    assert.equal(eventName('web-0', nanos), `web-0.${hex}`);
  });

  it('keeps the plain form while it fits in 253 characters', () => {
    const longest = 'a'.repeat(EVENT_NAME_MAX_LENGTH - hex.length - 1);
    assert.equal(eventName(longest, nanos), `${longest}.${hex}`);
  });

  it('a 253-character object name gives a valid name of at most 253 characters, still ending in the time', () => {
    const name = `${'a'.repeat(120)}.${'b'.repeat(132)}`;
    assert.equal(name.length, 253);
    const event = eventName(name, nanos);
    assertValidEventName(event);
    assert.ok(event.endsWith(`.${hex}`));
    assert.ok(event.startsWith(name.slice(0, 200)), 'the object stays recognisable');
  });

  it("never leaves the cut name ending in '.' or '-'", () => {
    // The cut falls right after the separator in each of these.
    for (const separator of ['.', '-']) {
      for (let at = 220; at < 232; at++) {
        const name = `${'a'.repeat(at)}${separator}${'b'.repeat(252 - at)}`;
        assertValidEventName(eventName(name, nanos));
      }
    }
  });

  it('two long names sharing a 240-character prefix get different names', () => {
    const prefix = `${'x'.repeat(100)}.${'y'.repeat(139)}`;
    assert.equal(prefix.length, 240);
    const first = eventName(`${prefix}-first`, nanos);
    const second = eventName(`${prefix}-second`, nanos);
    assertValidEventName(first);
    assertValidEventName(second);
    assert.notEqual(first, second);
    assert.equal(eventName(`${prefix}-first`, nanos), first, 'the same object gets the same name');
  });
});
