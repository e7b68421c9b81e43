/**
 * Chart rendering for tests: `helm template` through the pinned helm, parsed into objects.
 */
import { helm } from '@loopwright/cluster';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const chartsDir = fileURLToPath(new URL('../../charts/', import.meta.url));

/** A chart under charts/ (a controller's, named like it: `workspaceControllers()` lists them). */
export type ChartName = string;

export function chartPath(chart: ChartName): string {
  return `${chartsDir}${chart}`;
}

/** A rendered Kubernetes object; the tests look into it with plain property access. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  /** `--set-json key=<json>` pairs (typed: a number stays a number). */
  values?: Record<string, unknown>;
  valuesFiles?: string[];
  /** `--api-versions`: what the cluster would serve (mailgun-cluster requires Cluster API's). */
  apiVersions?: string[];
  /** `--skip-tests`: without the `helm test` hook's objects. */
  skipTests?: boolean;
}

/** `helm template` the chart and parse every document (CRDs from crds/ included via --include-crds). */
export async function render(chart: ChartName, options: RenderOptions = {}) {
  const args = [
    'template',
    options.release ?? 'rel',
    chartPath(chart),
    '--namespace',
    options.namespace ?? 'controllers',
    '--include-crds',
  ];
  for (const file of options.valuesFiles ?? []) args.push('--values', file);
  for (const apiVersion of options.apiVersions ?? []) args.push('--api-versions', apiVersion);
  if (options.skipTests) args.push('--skip-tests');
  for (const [key, value] of Object.entries(options.values ?? {}))
    args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  const { stdout } = await helm(args);
  return parseManifests(stdout);
}

function parseManifests(text: string): Manifest[] {
  const manifests: Manifest[] = [];
  for (const doc of parseAllDocuments(text)) {
    const [error] = doc.errors;
    if (error) throw new Error(`helm output is not valid YAML: ${error.message}`);
    const value = doc.toJS() as Manifest | null;
    if (value) manifests.push(value);
  }
  return manifests;
}

/** The one manifest of this kind (and name, when given); throws when there is none or several. */
export function one(manifests: Manifest[], kind: string, name?: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  const [first] = found;
  if (found.length !== 1 || !first)
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return first;
}

/** A `helm test` hook object (rendered by `helm template`, created only by `helm test`). */
export function isTestHook(manifest: Manifest): boolean {
  return manifest.metadata.annotations?.['helm.sh/hook'] === 'test';
}

export function kinds(manifests: Manifest[]): string[] {
  return manifests
    .map((m) => `${m.kind}/${m.metadata.namespace ? `${m.metadata.namespace}/` : ''}${m.metadata.name}`)
    .sort();
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

/** Rules in a canonical order (each list sorted, rules sorted), so two rule sets compare with deepEqual. */
export function normalizeRules(rules: PolicyRule[]): PolicyRule[] {
  const sorted = (list: string[] | undefined) => (list && list.length > 0 ? [...list].sort() : undefined);
  return rules
    .map((rule) => {
      const out: PolicyRule = { verbs: [...rule.verbs].sort() };
      const apiGroups = sorted(rule.apiGroups);
      const resources = sorted(rule.resources);
      const resourceNames = sorted(rule.resourceNames);
      const nonResourceURLs = sorted(rule.nonResourceURLs);
      if (apiGroups) out.apiGroups = apiGroups;
      if (resources) out.resources = resources;
      if (resourceNames) out.resourceNames = resourceNames;
      if (nonResourceURLs) out.nonResourceURLs = nonResourceURLs;
      return out;
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** The controller container of the chart's Deployment. */
export function controllerContainer(deployment: Manifest): Container {
  const spec = deployment.spec as { template: { spec: { containers: Container[] } } };
  const container = spec.template.spec.containers.find((c) => c.name === 'controller');
  if (!container) throw new Error('no controller container');
  return container;
}

export interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  [key: string]: unknown;
}

/** The container env as name -> value (valueFrom entries as their JSON, to assert on the wiring). */
export function envOf(container: Container): Record<string, string> {
  return Object.fromEntries(
    (container.env ?? []).map((e) => [e.name, e.value ?? JSON.stringify(e.valueFrom)]),
  );
}
