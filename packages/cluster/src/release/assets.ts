/**
 * The files a GitHub release carries besides images and charts: each controller's CRDs, the
 * clusterctl provider files for mailgun-cluster (see ./clusterctl.ts), and the release notes.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { helm } from '../helm/run.ts';
import { workspaceControllers } from '../workspace/controllers.ts';
import { releaseNotes } from './changelog.ts';
import { CLUSTER_API_CONTRACT, CLUSTERCTL_PROVIDER_LABEL, clusterctlMetadata } from './clusterctl.ts';
import type { ReleaseVersion } from './version.ts';

/** The controller that is a Cluster API provider, and what clusterctl calls it. */
const PROVIDER_CONTROLLER = 'mailgun-cluster';
/** clusterctl's convention for a provider's namespace (`capi-system`, `caph-system`...). */
const PROVIDER_NAMESPACE = 'mailgun-system';
/** The Secret the components create from `${MAILGUN_API_KEY}` and the Deployment reads. */
const PROVIDER_SECRET = 'mailgun-cluster-credentials';

/**
 * The variables clusterctl substitutes from the user's environment (`clusterctl init` fails naming any
 * that is unset and has no default): what the chart's required values are.
 */
const CLUSTERCTL_VARIABLES = {
  'mailgun.domain': '${MAILGUN_DOMAIN}',
  recipient: '${MAIL_RECIPIENT}',
  'mailgun.url': '${MAILGUN_URL:=https://api.mailgun.net}',
} as const;

/**
 * infrastructure-components.yaml: the released chart rendered into {@link PROVIDER_NAMESPACE} with
 * clusterctl's variables for its required values, its CRDs first, plus the namespace and the API key's
 * Secret (`stringData`: clusterctl substitutes text, and the chart's Secret holds base64). The values
 * schema is not applied: `${MAILGUN_DOMAIN}` is not a domain until clusterctl substitutes it.
 */
async function infrastructureComponents(chartPackage: string): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'loopwright-components-'));
  try {
    return await renderComponents(chartPackage, join(scratch, 'clusterctl-values.yaml'));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function renderComponents(chartPackage: string, valuesPath: string): Promise<string> {
  await writeFile(
    valuesPath,
    stringify({
      mailgun: {
        domain: CLUSTERCTL_VARIABLES['mailgun.domain'],
        url: CLUSTERCTL_VARIABLES['mailgun.url'],
        apiKey: { existingSecret: PROVIDER_SECRET },
      },
      recipient: CLUSTERCTL_VARIABLES.recipient,
    }),
  );
  const { stdout } = await helm([
    'template',
    PROVIDER_CONTROLLER,
    chartPackage,
    '--namespace',
    PROVIDER_NAMESPACE,
    '--include-crds',
    // The chart's `helm test` hook is for helm users; clusterctl would apply it as a component.
    '--skip-tests',
    '--skip-schema-validation',
    '--api-versions',
    `cluster.x-k8s.io/${CLUSTER_API_CONTRACT}`,
    '--values',
    valuesPath,
  ]);
  const rendered = parseAllDocuments(stdout)
    .map((document) => document.toJS() as unknown)
    .filter((object): object is Record<string, unknown> => object !== null && typeof object === 'object');
  const labels = { 'cluster.x-k8s.io/provider': CLUSTERCTL_PROVIDER_LABEL };
  const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROVIDER_NAMESPACE, labels } };
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: PROVIDER_SECRET, namespace: PROVIDER_NAMESPACE, labels },
    type: 'Opaque',
    stringData: { 'api-key': '${MAILGUN_API_KEY}' },
  };
  const crds = rendered.filter((object) => object.kind === 'CustomResourceDefinition');
  const rest = rendered.filter((object) => object.kind !== 'CustomResourceDefinition');
  return [namespace, ...crds, secret, ...rest].map((object) => `---\n${stringify(object)}`).join('');
}

export interface ReleaseAssets {
  dir: string;
  files: string[];
}

/**
 * Writes the assets into `outDir`: `<controller>-crds.yaml` for each controller with CRDs,
 * `infrastructure-components.yaml` and `metadata.yaml`, and `release-notes.md` (the CHANGELOG's section
 * for the release; `notesFallback` names the section to use when it has none, for a local release of a
 * version the CHANGELOG does not know yet).
 */
export async function writeReleaseAssets(
  release: ReleaseVersion,
  chartPackages: Readonly<Record<string, string>>,
  outDir: string,
  notesFallback?: string,
): Promise<ReleaseAssets> {
  await mkdir(outDir, { recursive: true });
  const files: string[] = [];
  const write = async (name: string, text: string): Promise<void> => {
    await writeFile(join(outDir, name), text);
    files.push(name);
  };
  for (const controller of workspaceControllers()) {
    if (controller.crdFiles.length === 0) continue;
    const crds = await Promise.all(controller.crdFiles.map((file) => readFile(file, 'utf8')));
    await write(
      `${controller.name}-crds.yaml`,
      crds.map((text) => `---\n${text.replace(/^---\n/, '')}`).join(''),
    );
  }
  const providerChart = chartPackages[PROVIDER_CONTROLLER];
  if (providerChart !== undefined) {
    await write('infrastructure-components.yaml', await infrastructureComponents(providerChart));
    await write('metadata.yaml', clusterctlMetadata(release));
  }
  const notes = await releaseNotes(release.version, notesFallback);
  await write('release-notes.md', `${notes}\n`);
  return { dir: outDir, files };
}
