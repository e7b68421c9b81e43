import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { templateCodeIdentifiers } from './identifiers.ts';

const identifiers = (template: string): string[] => [...templateCodeIdentifiers(template)].sort();

describe('templateCodeIdentifiers', () => {
  it('the code’s identifiers: not those of comments or string text', () => {
    assert.deepEqual(
      identifiers(
        [
          '/** The Widget: a Comment. */',
          "import { Manager, type Metrics as M } from '@loopwright/runtime'; // Trailing",
          'const A = "Double Quoted" + \'Single\';',
        ].join('\n'),
      ),
      ['A', 'M', 'Manager', 'Metrics', 'as', 'const', 'from', 'import', 'type'],
    );
  });

  it('a template literal’s ${...} is code, its text is not; nested ones too', () => {
    assert.deepEqual(identifiers('f(`Text ${Outer(`Inner ${Deep} Text`)} More`)'), ['Deep', 'Outer', 'f']);
    assert.deepEqual(identifiers('const o = { a: `${ { B: 1 }.B }` }; C'), ['B', 'C', 'a', 'const', 'o']);
  });

  it('a regular expression literal is no code; a division is', () => {
    assert.deepEqual(identifiers("const R = /Quote'Inside [/] Text/i; X"), ['R', 'X', 'const']);
    assert.deepEqual(identifiers('const half = Total / Two;'), ['Total', 'Two', 'const', 'half']);
  });

  it('a name with an EJS output tag in it is derived from the options; control tags are left out', () => {
    assert.deepEqual(
      identifiers(
        [
          '<% if (namespaced) { -%>',
          'import type { <%= kindImport %> } from "./types.ts";',
          'export function kube<%= kind %>Api(Client: <%= constantPrefix %>_GROUP): Date {}',
          '<%_ } _%>',
        ].join('\n'),
      ),
      ['Client', 'Date', 'export', 'from', 'function', 'import', 'type'],
    );
  });

  it('numbers are no identifiers', () => {
    assert.deepEqual(identifiers('const t = 30_000 + 1.5e3;'), ['const', 't']);
  });
});
