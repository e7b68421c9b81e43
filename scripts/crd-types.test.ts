import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { generateCrdTypes, repoRoot, targets } from './crd-types.ts';

describe('CRD types', () => {
  for (const target of targets) {
    it(`${target.out} is what its CRDs generate (run \`pnpm generate\` after editing a CRD)`, () => {
      const expected = generateCrdTypes(target.crds.map((crd) => join(repoRoot, crd)));
      assert.equal(readFileSync(join(repoRoot, target.out), 'utf8'), expected);
    });
  }

  it('maps every supported schema construct', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'crd-types-'));
    t.after(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    const path = join(dir, 'widgets.yaml');
    const schema = {
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        spec: {
          type: 'object',
          description: 'What the user wants.',
          required: ['size'],
          properties: {
            size: { type: 'integer' },
            mode: { type: 'string', enum: ['fast', 'safe'] },
            port: { 'x-kubernetes-int-or-string': true },
            tags: { type: 'array', items: { type: 'string' } },
            limits: { type: 'object', additionalProperties: { type: 'number' } },
            anything: { 'x-kubernetes-preserve-unknown-fields': true },
            'dashed-key': { type: 'boolean' },
            rules: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
          },
        },
      },
    };
    const crd = {
      spec: {
        names: { kind: 'Widget' },
        versions: [{ name: 'v1', storage: true, schema: { openAPIV3Schema: schema } }],
      },
    };
    writeFileSync(path, stringify(crd));
    const source = generateCrdTypes([path]);
    assert.match(
      source,
      /export interface Widget \{\n {2}apiVersion\?: string;\n {2}kind\?: string;\n {2}metadata\?: ObjectMeta;\n {2}\/\*\* What the user wants\. \*\/\n {2}spec\?: WidgetSpec;\n\}/,
    );
    assert.match(source, /\/\*\* What the user wants\. \*\/\nexport interface WidgetSpec \{/);
    for (const line of [
      '  size: number;',
      "  mode?: 'fast' | 'safe';",
      '  port?: number | string;',
      '  tags?: string[];',
      '  limits?: Record<string, number>;',
      '  anything?: unknown;',
      "  'dashed-key'?: boolean;",
      '  rules?: WidgetSpecRule[];',
    ]) {
      assert.ok(source.includes(line), `missing: ${line}`);
    }
    assert.match(source, /export interface WidgetSpecRule \{\n {2}name\?: string;\n\}/);
    assert.equal(
      (source.match(/apiVersion\?: string;/g) ?? []).length,
      1,
      'a schema apiVersion is not emitted twice',
    );
  });

  it('refuses a schema type it cannot express instead of guessing', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'crd-types-'));
    t.after(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    const path = join(dir, 'bad.yaml');
    const schema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { when: { type: 'date' } } } },
    };
    writeFileSync(
      path,
      stringify({
        spec: {
          names: { kind: 'Bad' },
          versions: [{ name: 'v1', storage: true, schema: { openAPIV3Schema: schema } }],
        },
      }),
    );
    assert.throws(() => generateCrdTypes([path]), /BadSpecWhen: unsupported schema type date/);
  });
});
