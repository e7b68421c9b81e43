import { optionsTable } from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './crd-types.ts';
import { BEGIN, END, targets, withOptionsTable } from './readme-options.ts';

describe('README options tables', () => {
  for (const { readme, program } of targets) {
    it(`${readme} lists ${program.name}'s options as declared (run \`pnpm generate\` after changing one)`, () => {
      const text = readFileSync(join(repoRoot, readme), 'utf8');
      assert.equal(text, withOptionsTable(text, optionsTable(program), readme));
    });
  }

  it('replaces exactly what lies between the markers, and refuses a README without them', () => {
    const readme = `# x\n\n${BEGIN}\n\nold\n\n${END}\n\nafter\n`;
    assert.equal(withOptionsTable(readme, '| new |', 'x'), `# x\n\n${BEGIN}\n\n| new |\n\n${END}\n\nafter\n`);
    assert.throws(
      () => withOptionsTable('# x\n', '| new |', 'README.md'),
      /^Error: README\.md: no <!-- options:begin/,
    );
  });
});
