/**
 * TypeScript types from CRDs, so each chart's CRD files stay the single source of truth for its
 * controller's types. `pnpm generate` rewrites every controller's generated file (`targets`);
 * crd-types.test.ts fails when a checked-in file differs from what its CRDs generate.
 *
 * One interface per object schema with properties, named parent + Property (`AtSpec`,
 * `AtStatusCondition`); the root is the CRD's kind and always has `apiVersion`, `kind` and a
 * `metadata: ObjectMeta` from @loopwright/informer. The storage version's schema is used.
 * Covers what structural CRD schemas use: object (properties, required, additionalProperties), array,
 * string (enum), integer, number, boolean, int-or-string, preserve-unknown-fields.
 */
import { workspaceControllers } from '@loopwright/cluster';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export interface JsonSchema {
  type?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  enum?: (string | number)[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface Crd {
  spec: {
    names: { kind: string };
    versions: { name: string; storage?: boolean; schema?: { openAPIV3Schema?: JsonSchema } }[];
  };
}

export const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * Which CRDs generate which file (paths from the repository root): each controller's
 * `charts/<name>/crds/*.yaml`, in file-name order, into `packages/<name>/src/generated/types.ts`.
 */
export const targets: readonly { out: string; crds: readonly string[] }[] = workspaceControllers(repoRoot)
  .filter(({ crdFiles }) => crdFiles.length > 0)
  .map(({ name, crdFiles }) => ({
    out: `packages/${name}/src/generated/types.ts`,
    crds: crdFiles.map((path) => relative(repoRoot, path)),
  }));

/** The module for a list of CRD files: a header, then each CRD's interfaces in file order. */
export function generateCrdTypes(crdPaths: readonly string[]): string {
  const sources = crdPaths.map((path) => relative(repoRoot, path)).join(', ');
  const out = [
    `// Generated from ${sources} by \`pnpm generate\`. Do not edit: edit the CRD and regenerate.`,
    "import type { ObjectMeta } from '@loopwright/informer';",
  ];
  for (const path of crdPaths) {
    const crd = parse(readFileSync(path, 'utf8')) as Crd;
    const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
    const schema = version?.schema?.openAPIV3Schema;
    if (!schema) throw new Error(`${basename(path)}: no openAPIV3Schema in its storage version`);
    out.push('', ...generateKind(crd.spec.names.kind, schema));
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function generateKind(kind: string, root: JsonSchema): string[] {
  const interfaces: string[] = [];
  const rest = Object.fromEntries(
    Object.entries(root.properties ?? {}).filter(
      ([name]) => !['apiVersion', 'kind', 'metadata'].includes(name),
    ),
  );
  emitInterface(kind, { ...root, properties: rest }, interfaces, [
    '  apiVersion?: string;',
    '  kind?: string;',
    '  metadata?: ObjectMeta;',
  ]);
  // One blank line between interfaces, as Prettier would leave it.
  return interfaces.reverse().flatMap((text, index) => (index === 0 ? [text] : ['', text]));
}

/** Pushes `name`'s interface after the interfaces of its nested objects (reversed by the caller). */
function emitInterface(name: string, schema: JsonSchema, out: string[], leading: string[] = []): void {
  const required = new Set(schema.required ?? []);
  const lines = [...doc(schema.description, ''), `export interface ${name} {`, ...leading];
  for (const [property, child] of Object.entries(schema.properties ?? {})) {
    const type = typeOf(`${name}${pascal(property)}`, child, out);
    const key = /^[A-Za-z_$][\w$]*$/.test(property) ? property : `'${property}'`;
    lines.push(...doc(child.description, '  '), `  ${key}${required.has(property) ? '' : '?'}: ${type};`);
  }
  lines.push('}');
  out.push(lines.join('\n'));
}

function typeOf(name: string, schema: JsonSchema, out: string[]): string {
  if (schema['x-kubernetes-int-or-string']) return 'number | string';
  if (schema.enum)
    return schema.enum.map((value) => (typeof value === 'string' ? `'${value}'` : String(value))).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array': {
      const item = typeOf(singular(name), schema.items ?? {}, out);
      return item.includes(' ') ? `(${item})[]` : `${item}[]`;
    }
    case 'object':
      if (schema.properties) {
        emitInterface(name, schema, out);
        return name;
      }
      if (typeof schema.additionalProperties === 'object') {
        return `Record<string, ${typeOf(`${name}Value`, schema.additionalProperties, out)}>`;
      }
      return 'Record<string, unknown>';
    default:
      if (schema['x-kubernetes-preserve-unknown-fields']) return 'unknown';
      throw new Error(`${name}: unsupported schema type ${String(schema.type)}`);
  }
}

function pascal(property: string): string {
  return property.charAt(0).toUpperCase() + property.slice(1);
}

/** `AtStatusConditions` -> `AtStatusCondition` for an array's item type. */
function singular(name: string): string {
  return name.endsWith('s') ? name.slice(0, -1) : `${name}Item`;
}

function doc(text: string | undefined, indent: string): string[] {
  return text ? [`${indent}/** ${text.trim().replaceAll('*/', '*\\/')} */`] : [];
}

/** `node scripts/crd-types.ts`: rewrite every target. */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const target of targets) {
    // A new controller has no generated/ directory until its first `pnpm generate`.
    mkdirSync(dirname(join(repoRoot, target.out)), { recursive: true });
    writeFileSync(
      join(repoRoot, target.out),
      generateCrdTypes(target.crds.map((crd) => join(repoRoot, crd))),
    );
    console.log(`wrote ${target.out}`);
  }
}
